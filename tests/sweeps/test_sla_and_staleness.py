"""SLA deadlines and staleness with a moved clock."""

from __future__ import annotations

import pytest

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.identity import Actor
from orchestrator.engine.coordinator import coordinate
from orchestrator.service.producer import get_run, send_signal
from orchestrator.sweeps import sweep_sla, sweep_stale
from orchestrator.sweeps.stale_actions import Resumed, cancel_stale, resume_stale, stale_runs
from tests.support.sweeps import (
    Clock,
    audit_counts,
    audits_of,
    drive_to,
    marks_of,
    new_tenant,
    no_kick,
    notifications_of,
    start_run,
)


def test_a_run_past_its_sla_fires_one_event(clock: Clock) -> None:
    owner, reviewer = new_tenant()
    late = start_run(owner)
    drive_to(reviewer, late, "wait_for_soa_approval")
    clock.advance(days=29, hours=23)
    assert sweep_sla() == 0
    clock.advance(hours=2)
    assert sweep_sla() == 1
    clock.advance(days=3)
    assert sweep_sla() == 0

    assert audit_counts(late)["lifecycle_workflow_sla_breached"] == 1
    [event] = audits_of(late, "lifecycle_workflow_sla_breached")
    assert event.event_metadata["late_by_s"] == 3600
    assert event.event_metadata["deadline"].startswith("2030-02-06T09:00")
    assert notifications_of(late) == {"run.sla_breached": 1}


def test_finished_runs_never_breach(clock: Clock) -> None:
    owner, _ = new_tenant()
    run_id = start_run(owner)
    coordinate(run_id)
    send_signal(
        owner, run_id, "assessment_cancelled", "stop", payload={"reason": "test"}, kick=no_kick
    )
    coordinate(run_id)
    clock.advance(days=31)
    assert sweep_sla() == 0 and not marks_of(run_id)


def test_sla_is_configuration(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIFECYCLE_SWEEP_SLA_S", "3600")
    reset_settings()
    owner, _ = new_tenant()
    start_run(owner)
    clock.advance(minutes=61)
    assert sweep_sla() == 1


def test_an_idle_run_is_flagged_stale_once_per_idle_spell(clock: Clock) -> None:
    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    drive_to(reviewer, run_id, "wait_for_framework_selection")
    clock.advance(days=13)
    assert sweep_stale() == 0
    clock.advance(days=2)
    assert sweep_stale() == 1
    assert sweep_stale() == 0
    assert [run.id for run in stale_runs(owner)] == [run_id]
    assert stale_runs(Actor("another-tenant", "user:x")) == []

    # Activity ends the spell; a new idle spell is flagged again.
    send_signal(
        owner, run_id, "assessment_blocked", "hold", payload={"reason": "audit"}, kick=no_kick
    )
    coordinate(run_id)
    assert stale_runs(owner) == []
    clock.advance(days=15)
    assert sweep_stale() == 1
    assert audit_counts(run_id)["lifecycle_workflow_stale"] == 2
    assert notifications_of(run_id) == {"run.stale": 2}
    assert len(marks_of(run_id)) == 2


def test_a_stale_run_can_be_resumed_or_cancelled(clock: Clock) -> None:
    owner, reviewer = new_tenant()
    blocked, waiting = start_run(owner), start_run(owner)
    drive_to(reviewer, blocked, "wait_for_framework_selection")
    drive_to(reviewer, waiting, "wait_for_framework_selection")
    send_signal(
        owner, blocked, "assessment_blocked", "hold", payload={"reason": "audit"}, kick=no_kick
    )
    coordinate(blocked)
    clock.advance(days=15)
    assert sweep_stale() == 2

    assert resume_stale(owner, blocked, "resume-after-stale") is Resumed.UNBLOCKED
    coordinate(blocked)
    assert get_run(owner, blocked).status == "waiting_for_input"
    cancel_stale(owner, waiting, "cancel-after-stale")
    coordinate(waiting)
    assert get_run(owner, waiting).status == "cancelled"
    assert stale_runs(owner) == []
