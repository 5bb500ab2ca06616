"""SLA: a run not finished `sla_s` after it was created fires one sla-breached event."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from orchestrator.config.settings import get_settings
from orchestrator.config.sweep_registry import sweep
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.events import NotificationEvent
from orchestrator.db.models import WorkflowRun
from orchestrator.db.sql import aware
from orchestrator.sweeps.window_sweep import WindowSweep

MARK = "sla_breached"


def _details(run: WorkflowRun, sla: timedelta, now: datetime) -> dict[str, Any]:
    deadline = aware(run.created_at) + sla
    return {
        "deadline": deadline.isoformat(),
        "sla_s": sla.total_seconds(),
        "status": run.status,
        "late_by_s": int((now - deadline).total_seconds()),
    }


SLA = WindowSweep(
    cursor="sla",
    mark=MARK,
    crossed=WorkflowRun.created_at,
    threshold=lambda: timedelta(seconds=get_settings().sweeps.sla_s),
    audit=AuditEventType.LIFECYCLE_WORKFLOW_SLA_BREACHED,
    event=NotificationEvent.SLA_BREACHED,
    key=lambda _: "",
    details=_details,
)


@sweep("sla")
def sweep_sla() -> int:
    """Runs that crossed their SLA deadline since the last sweep; returns events fired."""
    return SLA.sweep()
