"""Staleness: a run idle (unchanged) for `stale_after_s` is flagged stale, once per idle
spell. The flag is a marker keyed by the run's version, so it clears itself the moment
the run changes. A stale run is resumed or cancelled like any run (see `stale_actions`).
"""

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

MARK = "stale"


def sweep_stale() -> int:
    """Runs that became idle past the threshold since the last sweep; returns flags set."""
    now = utcnow()
    idle = timedelta(seconds=get_settings().sweeps.stale_after_s)
    after = SweepMessages()
    with transaction() as session:

        def flag(run: WorkflowRun) -> int:
            return _flag(session, run, idle, after)

        fired = for_active_runs_crossing(
            session, "stale", WorkflowRun.updated_at, now - idle, now, flag
        )
    after.send()
    return fired


def _flag(session: Session, run: WorkflowRun, idle: timedelta, after: SweepMessages) -> int:
    now = utcnow()
    key = str(run.version)
    details = {
        "idle_since": aware(run.updated_at).isoformat(),
        "status": run.status,
        "version": run.version,
        "stale_after_s": idle.total_seconds(),
        "reason": run.reason,
    }
    if not claim_mark(session, run.id, MARK, key, now, details):
        return 0
    announce(
        session,
        Occasion(run, MARK, key, now),
        AuditEventType.LIFECYCLE_WORKFLOW_STALE,
        NotificationEvent.RUN_STALE,
        run.current_step,
        details,
        after,
    )
    return 1
