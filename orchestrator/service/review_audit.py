"""The audit trail of review work (claims, releases, lapses, comments): one event on the
run, in the transaction of the change it records."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.engine.audit_rows import append_audit
from orchestrator.engine.run_rows import RunRecord


def audit_review(
    session: Session,
    run: RunRecord,
    event: AuditEventType,
    actor_id: str,
    metadata: dict[str, Any],
) -> None:
    append_audit(session, run, event, run.current_step, metadata, utcnow(), actor_id)
