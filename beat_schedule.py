"""The periodic sweeps `celery beat` runs (defined in orchestrator.engine.schedule)."""

from orchestrator.engine.schedule import BEAT_SCHEDULE, build_schedule

__all__ = ["BEAT_SCHEDULE", "build_schedule"]
