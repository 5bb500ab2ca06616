"""Doing a request once per (tenant, key): the first outcome is stored and replayed; the
same key with a different request is a conflict. The API's `Idempotency-Key` and the
console's form keys both use it; each turns the outcome into its own answer."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from orchestrator.config.settings import get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import IdempotencyConflict, IdempotencyInProgress
from orchestrator.contracts.ids import new_id
from orchestrator.db.apikey_models import IdempotentResponse
from orchestrator.db.session import transaction


@dataclass(frozen=True)
class StoredResponse:
    status_code: int
    body: dict[str, Any]
    headers: dict[str, str]


def request_hash(method: str, path: str, material: Any) -> str:
    encoded = json.dumps(
        {"method": method, "path": path, "request": material}, sort_keys=True, default=str
    ).encode()
    return hashlib.sha256(encoded).hexdigest()


def once(
    tenant_id: str, key: str | None, fingerprint: str, action: Callable[[], StoredResponse]
) -> tuple[StoredResponse, bool]:
    """`action`'s outcome and whether it is a replay of the one stored under the key."""
    if key is None:
        return action(), False
    stored = _claim(tenant_id, key, fingerprint)
    if stored is not None:
        return stored, True
    try:
        outcome = action()
    except BaseException:
        _release(tenant_id, key)  # nothing happened: the key is free again
        raise
    _complete(tenant_id, key, outcome)
    return outcome, False


def _claim(tenant_id: str, key: str, fingerprint: str) -> StoredResponse | None:
    """Reserve the key, or return the response stored under it."""
    try:
        with transaction() as session:
            session.add(
                IdempotentResponse(
                    id=new_id(),
                    tenant_id=tenant_id,
                    idempotency_key=key,
                    request_hash=fingerprint,
                    created_at=utcnow(),
                )
            )
        return None
    except IntegrityError:
        pass
    with transaction() as session:
        row = session.scalar(
            select(IdempotentResponse).where(
                IdempotentResponse.tenant_id == tenant_id, IdempotentResponse.idempotency_key == key
            )
        )
        if row is None:  # released meanwhile: claim again
            return _claim(tenant_id, key, fingerprint)
        if row.request_hash != fingerprint:
            raise IdempotencyConflict(
                "this Idempotency-Key was used before with a different request"
            )
        if row.status_code is not None:
            return StoredResponse(
                row.status_code, dict(row.response_body or {}), dict(row.response_headers or {})
            )
        stale = utcnow() - timedelta(seconds=get_settings().api.idempotency_stale_s)
        if _as_aware(row.created_at) > stale:
            raise IdempotencyInProgress(
                "a request with this Idempotency-Key is still being handled"
            )
        row.created_at = utcnow()  # the first attempt died: this one takes over
        return None


def _as_aware(value: datetime) -> datetime:
    # SQLite hands back naive datetimes; every time stored is UTC.
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _complete(tenant_id: str, key: str, outcome: StoredResponse) -> None:
    with transaction() as session:
        session.execute(
            update(IdempotentResponse)
            .where(
                IdempotentResponse.tenant_id == tenant_id, IdempotentResponse.idempotency_key == key
            )
            .values(
                status_code=outcome.status_code,
                response_body=outcome.body,
                response_headers=outcome.headers,
                completed_at=utcnow(),
            )
        )


def _release(tenant_id: str, key: str) -> None:
    with transaction() as session:
        session.execute(
            delete(IdempotentResponse).where(
                IdempotentResponse.tenant_id == tenant_id,
                IdempotentResponse.idempotency_key == key,
                IdempotentResponse.status_code.is_(None),
            )
        )
