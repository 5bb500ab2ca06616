"""Staleness: a run idle (unchanged) for `stale_after_s` is flagged stale, once per idle
spell. The flag is a marker keyed by the run's version, so it clears itself the moment
the run changes. A stale run is resumed or cancelled like any run (see `stale_actions`).
"""

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

MARK = "stale"


def _details(run: WorkflowRun, idle: timedelta, _: datetime) -> dict[str, Any]:
    return {
        "idle_since": aware(run.updated_at).isoformat(),
        "status": run.status,
        "version": run.version,
        "stale_after_s": idle.total_seconds(),
        "reason": run.reason,
    }


STALE = WindowSweep(
    cursor="stale",
    mark=MARK,
    crossed=WorkflowRun.updated_at,
    threshold=lambda: timedelta(seconds=get_settings().sweeps.stale_after_s),
    audit=AuditEventType.LIFECYCLE_WORKFLOW_STALE,
    event=NotificationEvent.RUN_STALE,
    key=lambda run: str(run.version),
    details=_details,
)


@sweep("stale")
def sweep_stale() -> int:
    """Runs that became idle past the threshold since the last sweep; returns flags set."""
    return STALE.sweep()
