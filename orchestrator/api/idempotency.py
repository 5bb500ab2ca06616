"""`Idempotency-Key` for POSTs that are not signals: the first response is stored and
replayed (service.idempotency); the same key with a different request is a 409.

Signal-like POSTs (start, signals, cancel, resume, operations) map the header to the
signal's own idempotency key instead: the inbox already makes those idempotent.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from orchestrator.api.field_kinds import IDEMPOTENCY_KEY, MAX_KEY_LENGTH
from orchestrator.api.problems import ApiProblem
from orchestrator.service.apikeys import Principal
from orchestrator.service.idempotency import StoredResponse, once, request_hash

__all__ = [
    "REPLAYED_HEADER",
    "StoredResponse",
    "check_key",
    "request_hash",
    "run_once",
    "run_post_once",
]

REPLAYED_HEADER = "Idempotent-Replayed"


def check_key(key: str | None) -> str | None:
    if key is None:
        return None
    key = key.strip()
    if IDEMPOTENCY_KEY.fullmatch(key) is None:
        raise ApiProblem(
            422,
            "invalid_idempotency_key",
            f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable ASCII characters",
        )
    return key


def run_once(
    principal: Principal, key: str | None, fingerprint: str, action: Callable[[], StoredResponse]
) -> JSONResponse:
    """Run `action` once per (tenant, key); replay its response for the same request."""
    outcome, replayed = once(principal.tenant_id, key, fingerprint, action)
    headers = dict(outcome.headers)
    if replayed:
        headers[REPLAYED_HEADER] = "true"
    return JSONResponse(outcome.body, status_code=outcome.status_code, headers=headers)


def run_post_once(
    principal: Principal,
    request: Request,
    body: BaseModel | None,
    idempotency_key: str | None,
    action: Callable[[], StoredResponse],
) -> JSONResponse:
    """`run_once` for a POST whose request is its path and its JSON body (none: `{}`)."""
    material = {} if body is None else body.model_dump(mode="json")
    fingerprint = request_hash("POST", request.url.path, material)
    return run_once(principal, check_key(idempotency_key), fingerprint, action)
