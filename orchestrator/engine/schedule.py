"""The beat schedule: periodic sweeps that keep every run moving or visibly stuck.

Intervals come from orchestrator.config.sweeps (LIFECYCLE_SWEEP_INTERVAL_S overrides
them all). Every sweep is safe to run twice at once, so several beats do no harm. A sweep
message older than its interval expires: the next one does the same work.
"""

from __future__ import annotations

from typing import Any

from orchestrator.config.settings import get_settings
from orchestrator.engine.routing import NOTIFICATIONS_QUEUE

#: schedule entry -> (task, sweep settings name, queue)
_SWEEPS = {
    "resend-missing-messages": (
        "orchestrator.sweep_missing_messages",
        "messages",
        "orchestrator",
    ),
    "publish-unpublished-outbox": ("orchestrator.sweep_outbox", "outbox", "orchestrator"),
    "rekick-runs-with-pending-signals": ("orchestrator.sweep_inbox", "inbox", "orchestrator"),
    "redispatch-lost-jobs": ("orchestrator.sweep_lost_jobs", "lost_jobs", "orchestrator"),
    "approval-wait-policies": (
        "orchestrator.sweep_approval_waits",
        "approval_waits",
        "orchestrator",
    ),
    "sla-deadlines": ("orchestrator.sweep_sla", "sla", "orchestrator"),
    "stale-runs": ("orchestrator.sweep_stale", "stale", "orchestrator"),
    "deliver-due-notifications": ("notifications.sweep", "notifications", NOTIFICATIONS_QUEUE),
}

#: The sweep tasks: they send no task events (orchestrator.engine.monitoring).
SWEEP_TASKS = frozenset(task for task, _, _ in _SWEEPS.values())


def build_schedule() -> dict[str, dict[str, Any]]:
    settings = get_settings().sweeps
    schedule: dict[str, dict[str, Any]] = {}
    for entry, (task, sweep, queue) in _SWEEPS.items():
        every = settings.interval(sweep)
        schedule[entry] = {
            "task": task,
            "schedule": every,
            "options": {"queue": queue, "expires": max(every - 1, 1)},
        }
    return schedule


BEAT_SCHEDULE: dict[str, dict[str, Any]] = build_schedule()
