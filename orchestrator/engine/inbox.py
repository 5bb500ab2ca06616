"""The durable signal inbox: insert once per (run, idempotency key), detect conflicts."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.signals import SignalEnvelope, SignalFate
from orchestrator.db.models import InboxSignal, SignalConflict
from orchestrator.db.tables import INBOX
from orchestrator.observability.tracing import current_traceparent

#: INSERT ... ON CONFLICT (run, key) DO NOTHING RETURNING id, built once per dialect.
_INSERT_ONCE = {
    name: dialect.insert(INBOX)
    .on_conflict_do_nothing(index_elements=["run_id", "idempotency_key"])
    .returning(INBOX.c.id)
    for name, dialect in (("postgresql", postgresql), ("sqlite", sqlite))
}


@dataclass(frozen=True)
class Recorded:
    signal_id: uuid.UUID
    fate: SignalFate
    reason: str | None
    duplicate: bool = False
    """The same signal was recorded before under this key; nothing new was stored."""
    conflict: bool = False
    """The key was used before with a different payload; recorded as a conflict, not applied."""


def insert_signal(session: Session, envelope: SignalEnvelope) -> Recorded:
    now = utcnow()
    values = {
        "signal_id": envelope.signal_id,
        "run_id": envelope.run_id,
        "type": envelope.type.value,
        "idempotency_key": envelope.idempotency_key,
        "content_hash": envelope.content_hash(),
        "envelope": envelope.model_copy(
            update={
                "received_at": envelope.received_at or now,
                # What the coordinator does with it continues the trace that recorded it.
                "traceparent": envelope.traceparent or current_traceparent(),
            }
        ).model_dump(mode="json"),
        "fate": SignalFate.PENDING.value,
        "received_at": now,
    }
    dialect = session.get_bind().dialect.name
    if session.execute(_INSERT_ONCE[dialect], values).scalar() is not None:
        return Recorded(envelope.signal_id, SignalFate.PENDING, None)
    existing = session.scalar(
        select(InboxSignal).where(
            InboxSignal.run_id == envelope.run_id,
            InboxSignal.idempotency_key == envelope.idempotency_key,
        )
    )
    assert existing is not None, "the conflicting row must exist"
    if existing.content_hash == values["content_hash"]:
        return Recorded(
            existing.signal_id, SignalFate(existing.fate), existing.reason, duplicate=True
        )
    session.add(
        SignalConflict(
            run_id=envelope.run_id,
            idempotency_key=envelope.idempotency_key,
            original_signal_id=existing.signal_id,
            envelope=values["envelope"],
            received_at=now,
        )
    )
    return Recorded(
        existing.signal_id,
        SignalFate.CONFLICT,
        "idempotency key reused with a different payload",
        conflict=True,
    )
