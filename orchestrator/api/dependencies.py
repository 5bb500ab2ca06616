"""Parameters many routes share: the Idempotency-Key header, paging, waiting for a fate."""

from __future__ import annotations

import time
import uuid
from typing import Annotated

from fastapi import Header, Query

from orchestrator.api.config import get_api_settings
from orchestrator.api.idempotency import check_key
from orchestrator.api.problems import ApiProblem
from orchestrator.contracts.signals import SignalFate
from orchestrator.producer import Actor, get_run
from orchestrator.queries import get_signal
from orchestrator.views import SignalReceipt

MAX_WAIT_S = 10.0

IdempotencyHeader = Annotated[str | None, Header(
    alias="Idempotency-Key", min_length=1, max_length=256,
    description="Makes the POST safe to retry: the same key and request give the same "
                "result; the same key with a different request is a 409.")]

Limit = Annotated[int, Query(ge=1, le=200, description="Page size.")]
Cursor = Annotated[str | None, Query(min_length=1, max_length=512,
                                     description="`next_cursor` of the previous page.")]
Wait = Annotated[float, Query(
    ge=0, le=MAX_WAIT_S,
    description="Seconds to wait for the coordinator to decide the signal's fate "
                "(0: answer as soon as the signal is durable).")]


def signal_key(header: str | None, body: str | None) -> str:
    """The signal's idempotency key: the header's or the body's (they must agree).
    Without either, the request gets a fresh key and is not safe to retry."""
    header, body = check_key(header), check_key(body)
    if header is not None and body is not None and header != body:
        raise ApiProblem(422, "idempotency_key_mismatch",
                         "the Idempotency-Key header and the body's idempotency_key differ")
    return header or body or f"api:{uuid.uuid4()}"


def await_fate(actor: Actor, receipt: SignalReceipt, wait_s: float) -> SignalReceipt:
    """Poll the inbox until the signal leaves `pending` or the wait runs out."""
    wait_s = min(wait_s, get_api_settings().max_signal_wait_s)
    if wait_s <= 0 or receipt.fate is not SignalFate.PENDING:
        return receipt
    deadline = time.monotonic() + wait_s
    pause = 0.02
    signal = get_signal(actor, receipt.run.id, receipt.signal_id)
    while signal.fate is SignalFate.PENDING and time.monotonic() < deadline:
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.25)
        signal = get_signal(actor, receipt.run.id, receipt.signal_id)
    return SignalReceipt(signal_id=receipt.signal_id, fate=signal.fate, reason=signal.reason,
                         duplicate=receipt.duplicate, run=get_run(actor, receipt.run.id))
