"""The beat schedule: periodic sweeps that keep every run moving or visibly stuck.

Each sweep is declared once in orchestrator.config.sweep_registry; intervals come from
its declaration, LIFECYCLE_SWEEP_INTERVALS overrides some and LIFECYCLE_SWEEP_INTERVAL_S
them all. Every sweep is safe to run twice at once, so several beats do no harm. A sweep
message older than its interval expires: the next one does the same work.
"""

from __future__ import annotations

from typing import Any

from orchestrator.config.settings import get_settings
from orchestrator.config.sweep_registry import declared


def sweep_tasks() -> frozenset[str]:
    """The sweep tasks: they send no task events (orchestrator.engine.monitoring)."""
    return frozenset(sweep.task for sweep in declared())


def build_schedule() -> dict[str, dict[str, Any]]:
    settings = get_settings().sweeps
    schedule: dict[str, dict[str, Any]] = {}
    for sweep in declared():
        every = settings.interval(sweep.name)
        schedule[sweep.entry] = {
            "task": sweep.task,
            "schedule": every,
            "options": {"queue": sweep.queue, "expires": max(every - 1, 1)},
        }
    return schedule


BEAT_SCHEDULE: dict[str, dict[str, Any]] = build_schedule()


def sweep_intervals() -> dict[str, float]:
    """Each scheduled sweep task and how often beat sends it (seconds)."""
    settings = get_settings().sweeps
    return {sweep.task: settings.interval(sweep.name) for sweep in declared()}
