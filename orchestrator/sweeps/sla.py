"""SLA: a run not finished `sla_s` after it was created fires one sla-breached event."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.db.sql import aware
from orchestrator.notifications.events import NotificationEvent
from orchestrator.sweeps.marks import claim_mark
from orchestrator.sweeps.run_windows import for_active_runs_crossing
from orchestrator.sweeps.sweep_actions import Occasion, SweepMessages, announce

MARK = "sla_breached"


def sweep_sla() -> int:
    """Runs that crossed their SLA deadline since the last sweep; returns events fired."""
    now = utcnow()
    sla = timedelta(seconds=get_settings().sweeps.sla_s)
    after = SweepMessages()
    with transaction() as session:

        def breach(run: WorkflowRun) -> int:
            return _breach(session, run, sla, after)

        fired = for_active_runs_crossing(
            session, "sla", WorkflowRun.created_at, now - sla, now, breach
        )
    after.send()
    return fired


def _breach(session: Session, run: WorkflowRun, sla: timedelta, after: SweepMessages) -> int:
    now = utcnow()
    deadline = aware(run.created_at) + sla
    details = {
        "deadline": deadline.isoformat(),
        "sla_s": sla.total_seconds(),
        "status": run.status,
        "late_by_s": int((now - deadline).total_seconds()),
    }
    if not claim_mark(session, run.id, MARK, "", now, details):
        return 0
    announce(
        session,
        Occasion(run, MARK, "", now),
        AuditEventType.LIFECYCLE_WORKFLOW_SLA_BREACHED,
        NotificationEvent.SLA_BREACHED,
        run.current_step,
        details,
        after,
    )
    return 1
