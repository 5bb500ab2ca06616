"""Periodic sweeps that keep every run moving or visibly stuck (run by `celery beat`)."""

from __future__ import annotations

from typing import Any

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "publish-unpublished-outbox": {
        "task": "orchestrator.sweep_outbox",
        "schedule": 15.0,
        "options": {"queue": "orchestrator", "expires": 14.0},
    },
    "rekick-runs-with-pending-signals": {
        "task": "orchestrator.sweep_inbox",
        "schedule": 30.0,
        "options": {"queue": "orchestrator", "expires": 29.0},
    },
}
