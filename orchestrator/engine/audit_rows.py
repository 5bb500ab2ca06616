"""The one place an audit event row is built outside a decision (sweeps, effects,
handoffs, review work, amendments), in the caller's transaction, with the run's identity
and trace."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from orchestrator.contracts.audit import AuditEventType
from orchestrator.db.models import AuditEvent, WorkflowRun
from orchestrator.engine.run_rows import RunRecord


def append_audit(
    session: Session,
    run: WorkflowRun | RunRecord,
    event: AuditEventType,
    step: str | None,
    details: dict[str, Any],
    now: datetime,
    actor: str,
) -> None:
    session.add(
        AuditEvent(
            tenant_id=run.tenant_id,
            organization_id=run.organization_id,
            assessment_id=run.assessment_id,
            run_id=run.id,
            step=step,
            event_type=event.value,
            actor_id=actor,
            trace_id=run.trace_id,
            event_metadata=details,
            created_at=now,
        )
    )
