"""The beat schedule names a registered task for every sweep, on the right queue."""

from __future__ import annotations

import pytest

from beat_schedule import build_schedule
from orchestrator.config.settings import Settings, reset_settings
from orchestrator.engine.celery_app import create_app
from orchestrator.engine.routing import QUEUES


def test_every_sweep_is_scheduled_and_registered() -> None:
    reset_settings()
    schedule = build_schedule()
    app = create_app(Settings(broker_url="memory://localhost/"))
    app.loader.import_default_modules()
    tasks = {entry["task"] for entry in schedule.values()}
    assert tasks == {
        "orchestrator.sweep_missing_messages",
        "orchestrator.sweep_outbox",
        "orchestrator.sweep_inbox",
        "orchestrator.sweep_lost_jobs",
        "orchestrator.sweep_approval_waits",
        "orchestrator.sweep_sla",
        "orchestrator.sweep_stale",
        "orchestrator.sweep_review_claims",
        "orchestrator.sweep_evidence_expiry",
        "orchestrator.sweep_overdue_requests",
        "notifications.sweep",
        "effects.sweep",
    }
    assert tasks <= set(app.tasks)
    assert {"notifications.deliver", "effects.perform"} <= set(app.tasks)
    assert {entry["options"]["queue"] for entry in schedule.values()} <= set(QUEUES)
    assert schedule["sweep-notifications"]["options"]["queue"] == "notifications"
    assert all(
        entry["options"]["expires"] < entry["schedule"]
        for entry in schedule.values()
        if entry["schedule"] > 1
    )


def test_one_setting_speeds_up_every_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIFECYCLE_SWEEP_INTERVAL_S", "0.5")
    reset_settings()
    try:
        assert {entry["schedule"] for entry in build_schedule().values()} == {0.5}
    finally:
        reset_settings()
