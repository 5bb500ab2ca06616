"""A run's effects outside the database, as people read them (API, CLI, console)."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select

from orchestrator.contracts.identity import Actor
from orchestrator.db.busy import retry_busy
from orchestrator.db.effect_models import ExternalEffect
from orchestrator.db.session import read_transaction
from orchestrator.db.sql import aware
from orchestrator.service.producer import load_run


class EffectView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: uuid.UUID
    kind: str
    artifact_kind: str | None
    artifact_version: int | None
    target_id: uuid.UUID
    status: str
    attempts: int
    idempotent: bool
    status_code: int | None
    last_error: str | None
    compensates_id: uuid.UUID | None
    """For an undo (a retraction, a withdrawal): the effect or webhook it undoes."""
    undo_reason: str | None
    """Why it is (to be) undone: rejected, superseded or cancelled."""
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, row: ExternalEffect) -> EffectView:
        return cls(
            id=row.id,
            kind=row.kind,
            artifact_kind=row.artifact_kind,
            artifact_version=row.artifact_version,
            target_id=row.target_id,
            status=row.status,
            attempts=row.attempts,
            idempotent=row.idempotent,
            status_code=row.status_code,
            last_error=row.last_error,
            compensates_id=row.compensates_id or row.notification_id,
            undo_reason=row.undo_reason,
            created_at=aware(row.created_at),
            updated_at=aware(row.updated_at),
        )


@retry_busy
def list_effects(actor: Actor, run_id: uuid.UUID) -> list[EffectView]:
    with read_transaction() as session:
        load_run(session, actor, run_id)
        rows = session.scalars(
            select(ExternalEffect)
            .where(ExternalEffect.run_id == run_id)
            .order_by(ExternalEffect.created_at, ExternalEffect.id)
        )
        return [EffectView.of(row) for row in rows]
