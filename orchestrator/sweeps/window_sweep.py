"""A sweep that marks each active run once when one of its timestamps crossed a threshold
(the SLA from creation, staleness from the last change): the mark is claimed, audited and
announced in the sweep's transaction, and the webhooks go after it commits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import InstrumentedAttribute

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.events import NotificationEvent
from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.sweeps.marks import claim_mark
from orchestrator.sweeps.run_windows import for_active_runs_crossing
from orchestrator.sweeps.sweep_actions import Occasion, SweepMessages, announce


@dataclass(frozen=True)
class WindowSweep:
    cursor: str
    """Where the sweep's window is kept between sweeps."""
    mark: str
    crossed: InstrumentedAttribute[Any]
    """The run's timestamp the threshold is counted from."""
    threshold: Callable[[], timedelta]
    audit: AuditEventType
    event: NotificationEvent
    key: Callable[[WorkflowRun], str]
    """One mark per run and key: "" for once per run, the version for once per idle spell."""
    details: Callable[[WorkflowRun, timedelta, datetime], dict[str, Any]]

    def sweep(self) -> int:
        """Mark the runs that crossed the threshold since the last sweep; returns marks set."""
        now = utcnow()
        threshold = self.threshold()
        after = SweepMessages()
        with transaction() as session:

            def mark(run: WorkflowRun) -> int:
                key = self.key(run)
                details = self.details(run, threshold, now)
                if not claim_mark(session, run.id, self.mark, key, now, details):
                    return 0
                occasion = Occasion(run, self.mark, key, now)
                step = run.current_step
                announce(session, occasion, self.audit, self.event, step, details, after)
                return 1

            fired = for_active_runs_crossing(
                session, self.cursor, self.crossed, now - threshold, now, mark
            )
        after.send()
        return fired
