"""Parameters many routes share: the Idempotency-Key header, paging, waiting for a fate."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import Query

from orchestrator.api.field_kinds import Cursor, IdempotencyHeader
from orchestrator.api.idempotency import check_key
from orchestrator.api.problems import ApiProblem
from orchestrator.config.settings import get_settings
from orchestrator.contracts.identity import Actor
from orchestrator.service.fates import await_fate as wait_for_fate
from orchestrator.service.read_models import SignalReceipt

__all__ = [
    "Cursor",
    "IdempotencyHeader",
    "Limit",
    "Wait",
    "await_fate_capped",
    "signal_key",
]

MAX_WAIT_S = 10.0

Limit = Annotated[int, Query(ge=1, le=200, description="Page size.")]
Wait = Annotated[
    float,
    Query(
        ge=0,
        le=MAX_WAIT_S,
        description="Seconds to wait for the coordinator to decide the signal's fate "
        "(0: answer as soon as the signal is durable).",
    ),
]


def signal_key(header: str | None, body: str | None) -> str:
    """The signal's idempotency key: the header's or the body's (they must agree).
    Without either, the request gets a fresh key and is not safe to retry."""
    header, body = check_key(header), check_key(body)
    if header is not None and body is not None and header != body:
        raise ApiProblem(
            422,
            "idempotency_key_mismatch",
            "the Idempotency-Key header and the body's idempotency_key differ",
        )
    return header or body or f"api:{uuid.uuid4()}"


def await_fate_capped(actor: Actor, receipt: SignalReceipt, wait_s: float) -> SignalReceipt:
    """Wait for the signal's fate, at most the API's configured maximum."""
    return wait_for_fate(actor, receipt, min(wait_s, get_settings().api.max_signal_wait_s))
