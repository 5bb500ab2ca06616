"""The approval-time histogram per gate and the transitions by destination on /metrics;
the scheduler's pulse in the health report (embedded database, a moved clock)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from orchestrator.api import app
from orchestrator.api.health import check_beat
from orchestrator.config.settings import reset_settings
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.engine.coordinator import coordinate
from orchestrator.engine.schedule import sweep_tasks
from orchestrator.runtime.tasks import SWEEP_TASK_BY_NAME
from orchestrator.service.producer import get_run
from orchestrator.sweeps.pulse import beat_pulse
from tests.ops.test_metrics_health import samples, value
from tests.support.sweeps import Clock, drive_to, new_tenant, start_run


def test_the_time_from_a_draft_to_its_approval_is_a_histogram_per_gate(quick: Clock) -> None:
    client = TestClient(app)
    before = samples(client.get("/metrics").text)
    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    run = drive_to(reviewer, run_id, "wait_for_soa_approval")
    answers = ScriptedReviewer(reviewer)
    # The scope approved and the rows decided first: the SoA version then waiting is the
    # one approved, two hours after it was drafted.
    while answers.prepare(run):
        run = drive_to(reviewer, run_id, "wait_for_soa_approval")
    quick.advance(hours=2)  # the reviewer takes two hours over the SoA
    assert answers.answer(get_run(owner, run_id))
    coordinate(run_id)

    after = samples(client.get("/metrics").text)

    def soa(suffix: str, **labels: str) -> float:
        return value(after, f"lifecycle_approval_wait_seconds{suffix}", gate="soa", **labels)

    assert soa("_count") == 1 and soa("_sum") == 7200
    assert soa("_bucket", le="3600.0") == 0 and soa("_bucket", le="14400.0") == 1
    # The scope, approved while the SoA waited, in no time at all.
    assert value(after, "lifecycle_approval_wait_seconds_count", gate="scope") == 1
    assert value(after, "lifecycle_approval_wait_seconds_sum", gate="scope") == 0
    assert value(after, "lifecycle_approval_scrape_ok") == 1
    # Every status change is counted by where it went (and where from).
    grew = sum(
        count - before.get((name, labels), 0.0)
        for (name, labels), count in after.items()
        if name == "lifecycle_transitions_total" and ("to_status", "waiting_for_approval") in labels
    )
    assert grew == 1


def test_each_scheduled_sweep_records_its_pulse_and_a_silent_one_is_overdue(quick: Clock) -> None:
    assert beat_pulse().last_sweep_at is None
    assert beat_pulse().overdue == sorted(sweep_tasks())

    SWEEP_TASK_BY_NAME["sla"].apply()  # as a worker runs what beat sends

    pulse = beat_pulse()
    assert pulse.last_sweep_at == quick.now
    [sla] = [sweep for sweep in pulse.sweeps if sweep.task == "orchestrator.sweep_sla"]
    assert (sla.runs, sla.overdue, sla.last_error) == (1, False, None)
    assert "orchestrator.sweep_sla" not in pulse.overdue
    quick.advance(seconds=3 * 300 + 1)  # three of its intervals without a start
    assert "orchestrator.sweep_sla" in beat_pulse().overdue


def test_the_health_report_says_beat_is_not_needed_on_the_embedded_default(quick: Clock) -> None:
    reset_settings()
    check = check_beat()
    assert check.ok and "embedded" in check.detail
    report = TestClient(app).get("/health")
    assert report.status_code in (200, 503)
    assert report.json()["checks"]["beat"]["ok"] is True
