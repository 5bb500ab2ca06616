"""Commands on a run that take a reason and answer with their signal's receipt (cancel,
resume, retry, block): one handler, registered once per command with its operation."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter

from orchestrator.api.auth import Operator
from orchestrator.api.dependencies import IdempotencyHeader, Wait, await_fate_capped, signal_key
from orchestrator.api.paths import RunId
from orchestrator.api.schemas import ControlRequest
from orchestrator.contracts.identity import Actor
from orchestrator.service.read_models import SignalReceipt

Operation = Callable[..., SignalReceipt]
"""`operation(actor, run_id, reason=..., idempotency_key=...)` from service.operations."""


def control_route(
    router: APIRouter,
    path: str,
    operation: Operation,
    *,
    name: str,
    summary: str,
    description: str,
    responses: dict[int | str, dict[str, Any]] | None = None,
) -> None:
    def handler(
        run_id: RunId,
        body: ControlRequest,
        principal: Operator,
        wait: Wait = 0,
        idempotency_key: IdempotencyHeader = None,
    ) -> SignalReceipt:
        return _send(operation, principal.actor, run_id, body, wait, idempotency_key)

    handler.__name__ = handler.__qualname__ = name
    router.add_api_route(
        path,
        handler,
        methods=["POST"],
        name=name,
        status_code=202,
        response_model=SignalReceipt,
        responses=responses,
        summary=summary,
        description=description,
    )


def _send(
    operation: Operation,
    actor: Actor,
    run_id: uuid.UUID,
    body: ControlRequest,
    wait: float,
    idempotency_key: str | None,
) -> SignalReceipt:
    key = signal_key(idempotency_key, body.idempotency_key)
    receipt = operation(actor, run_id, reason=body.reason, idempotency_key=key)
    return await_fate_capped(actor, receipt, wait)
