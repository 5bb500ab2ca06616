"""The audit trail of review work (claims, releases, lapses, comments): one event on the
run, in the transaction of the change it records."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.db.models import AuditEvent
from orchestrator.engine.run_rows import RunRecord


def audit_review(
    session: Session,
    run: RunRecord,
    event: AuditEventType,
    actor_id: str,
    metadata: dict[str, Any],
) -> None:
    session.add(
        AuditEvent(
            tenant_id=run.tenant_id,
            organization_id=run.organization_id,
            assessment_id=run.assessment_id,
            run_id=run.id,
            step=run.current_step,
            event_type=event.value,
            actor_id=actor_id,
            trace_id=run.trace_id,
            event_metadata=metadata,
            created_at=utcnow(),
        )
    )
