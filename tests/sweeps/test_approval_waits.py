"""Approval wait policies with a moved clock: remind, escalate, then block, each once."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from orchestrator.config.settings import get_settings, reset_settings
from orchestrator.config.sweeps import DAY, ApprovalTiming, SweepSettings
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.engine.coordinator import coordinate
from orchestrator.notifications.subscriptions import subscribe
from orchestrator.service.producer import get_run
from orchestrator.sweeps import sweep_approval_waits
from tests.support.sweeps import (
    Clock,
    audit_counts,
    audits_of,
    deliveries_of,
    drive_to,
    marks_of,
    new_tenant,
    notifications_of,
    signals_of,
    start_run,
)

SOA_WAIT = "wait_for_soa_approval"


def test_remind_escalate_block_each_fire_once_at_their_time(clock: Clock) -> None:
    owner, reviewer = new_tenant()
    subscribe(owner, "https://hooks.example.org/lifecycle")
    run_id = start_run(owner)
    drive_to(reviewer, run_id, SOA_WAIT)

    clock.advance(hours=23)
    assert sweep_approval_waits() == {"reminded": 0, "escalated": 0, "approval_blocked": 0}
    clock.advance(hours=2)
    assert sweep_approval_waits()["reminded"] == 1
    assert sweep_approval_waits()["reminded"] == 0, "a reminder fires once per wait"
    clock.advance(days=2)
    assert sweep_approval_waits() == {"reminded": 0, "escalated": 1, "approval_blocked": 0}
    clock.advance(days=4)
    assert sweep_approval_waits() == {"reminded": 0, "escalated": 0, "approval_blocked": 1}
    assert sweep_approval_waits()["approval_blocked"] == 0

    [block] = signals_of(run_id, "assessment_blocked")
    assert block.envelope["actor_id"] == "system:sweeper"
    coordinate(run_id)
    run = get_run(owner, run_id)
    assert run.status == "blocked"
    assert run.reason and "soa" in run.reason and "block after 604800 s" in run.reason
    audits = audit_counts(run_id)
    assert audits["lifecycle_workflow_approval_reminder_sent"] == 1
    assert audits["lifecycle_workflow_approval_escalated"] == 1
    assert audits["lifecycle_workflow_blocked"] == 1
    [blocked] = audits_of(run_id, "lifecycle_workflow_blocked")
    assert blocked.actor_id == "system:sweeper" and blocked.step == SOA_WAIT
    assert notifications_of(run_id) == {
        "approval.reminder": 1,
        "approval.escalated": 1,
        "approval.blocked": 1,
    }
    assert len(deliveries_of(run_id)) == 3
    assert marks_of(run_id) == {
        ("reminded", f"{SOA_WAIT}:1"): 1,
        ("escalated", f"{SOA_WAIT}:1"): 1,
        ("approval_blocked", f"{SOA_WAIT}:1"): 1,
    }


def test_a_sweep_that_wakes_late_fires_every_stage_that_is_due(clock: Clock) -> None:
    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    drive_to(reviewer, run_id, SOA_WAIT)
    clock.advance(days=8)
    assert sweep_approval_waits() == {"reminded": 1, "escalated": 1, "approval_blocked": 1}


def test_an_answered_wait_is_never_reminded(clock: Clock) -> None:
    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    run = drive_to(reviewer, run_id, SOA_WAIT)
    clock.advance(hours=1)
    answers = ScriptedReviewer(reviewer)
    while run.current_step == SOA_WAIT:  # the scope, the rows decided, then the SoA itself
        assert answers.answer(run)
        coordinate(run_id)
        run = get_run(reviewer, run_id)
    clock.advance(days=30)
    fired = sweep_approval_waits()
    assert fired["reminded"] == 0 and fired["approval_blocked"] == 0
    assert not marks_of(run_id)


def test_each_gate_has_its_own_policy(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "LIFECYCLE_SWEEP_APPROVAL_POLICIES",
        '{"wait_for_soa_approval": '
        '{"remind_after_s": 60, "escalate_after_s": 120, "block_after_s": 180}}',
    )
    reset_settings()
    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    drive_to(reviewer, run_id, SOA_WAIT)
    clock.advance(seconds=61)
    assert sweep_approval_waits()["reminded"] == 1
    assert get_settings().sweeps.gate(SOA_WAIT).block_after_s == 180  # type: ignore[arg-type]
    assert get_settings().sweeps.gate("wait_for_gap_approval").block_after_s == 7 * DAY  # type: ignore[arg-type]


def test_policies_must_be_ordered_and_name_approval_waits() -> None:
    with pytest.raises(ValidationError, match="remind_after_s <= escalate_after_s"):
        ApprovalTiming(remind_after_s=10, escalate_after_s=5, block_after_s=20)
    with pytest.raises(ValidationError, match="not approval waits: create_scope"):
        SweepSettings(
            approval_policies={
                "create_scope": {  # type: ignore[dict-item]
                    "remind_after_s": 1,
                    "escalate_after_s": 2,
                    "block_after_s": 3,
                }
            }
        )
