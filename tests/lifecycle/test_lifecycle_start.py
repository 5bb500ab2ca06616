"""Starting a run: validate_assessment runs inline, then the run waits for documents."""

from __future__ import annotations

import pytest

from orchestrator.contracts.signals import SignalFate
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle.decide import decide
from orchestrator.lifecycle.effects import EnqueueJob, StepChanged
from tests.support.decisions import (
    HUMAN,
    E,
    S,
    audits,
    effects_of,
    new_state,
    only_audits,
    resume_signal,
    signal,
    signal_audits,
    start_signal,
    step_changes,
)


def test_start_validates_inline_then_waits_for_documents() -> None:
    state = new_state()
    decision = decide(state, start_signal(state))

    assert decision.fate is SignalFate.APPLIED
    assert decision.reason is None
    new = decision.state
    assert new.status is WorkflowStatus.WAITING_FOR_INPUT
    assert new.step is Step.WAIT_FOR_DOCUMENTS
    assert new.reason is None
    assert new.active_job_id is None
    assert dict(new.attempts) == {Step.VALIDATE_ASSESSMENT: 1, Step.WAIT_FOR_DOCUMENTS: 1}
    assert step_changes(decision) == [
        StepChanged(Step.VALIDATE_ASSESSMENT, 1, StepStatus.RUNNING),
        StepChanged(Step.VALIDATE_ASSESSMENT, 1, StepStatus.COMPLETED),
        StepChanged(Step.WAIT_FOR_DOCUMENTS, 1, StepStatus.RUNNING),
        StepChanged(Step.WAIT_FOR_DOCUMENTS, 1, StepStatus.WAITING),
    ]
    assert not effects_of(decision, EnqueueJob)


def test_start_audits_the_signal_the_start_and_both_steps() -> None:
    state = new_state()
    decision = decide(state, start_signal(state))

    kinds = [a.event_type for a in audits(decision)]
    assert kinds == [
        E.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED,
        E.LIFECYCLE_WORKFLOW_STARTED,
        E.LIFECYCLE_WORKFLOW_STEP_STARTED,
        E.LIFECYCLE_WORKFLOW_STEP_COMPLETED,
        E.LIFECYCLE_WORKFLOW_STEP_STARTED,
        E.LIFECYCLE_WORKFLOW_WAITING_FOR_INPUT,
    ]
    started = audits(decision, E.LIFECYCLE_WORKFLOW_STARTED)[0]
    assert started.actor_id == HUMAN
    # No origin in this start request; the run pinned the newest definition shipped.
    assert started.metadata == {"trace_id": "trace-test", "origin": None, "definition": "v1"}
    waiting = audits(decision, E.LIFECYCLE_WORKFLOW_WAITING_FOR_INPUT)[0]
    assert waiting.step is Step.WAIT_FOR_DOCUMENTS
    assert waiting.metadata == {"awaits": S.DOCUMENTS_UPLOADED.value}


@pytest.mark.parametrize(
    "assessment, reason",
    [
        (None, "assessment snapshot missing from the start request"),
        ("not-a-dict", "assessment snapshot missing from the start request"),
        ({"name": "FY25", "status": "closed"}, "assessment is closed"),
        ({"name": "   ", "status": "draft"}, "assessment has no name"),
        ({"status": "draft"}, "assessment has no name"),
    ],
)
def test_invalid_assessment_blocks_the_run_at_validate(assessment: object, reason: str) -> None:
    state = new_state()
    decision = decide(state, start_signal(state, assessment))

    assert decision.fate is SignalFate.APPLIED
    new = decision.state
    assert new.status is WorkflowStatus.BLOCKED
    assert new.step is Step.VALIDATE_ASSESSMENT
    assert new.reason == reason
    assert new.blocked_from is None
    assert new.attempt(Step.VALIDATE_ASSESSMENT) == 1
    assert step_changes(decision, StepStatus.COMPLETED) == []
    blocked = audits(decision, E.LIFECYCLE_WORKFLOW_BLOCKED)
    assert len(blocked) == 1
    assert blocked[0].metadata == {"reason": reason}
    assert blocked[0].step is Step.VALIDATE_ASSESSMENT


def test_resume_after_invalid_assessment_re_enters_validate() -> None:
    state = new_state()
    blocked = decide(state, start_signal(state, None)).state
    decision = decide(blocked, resume_signal(blocked))

    assert decision.fate is SignalFate.APPLIED
    new = decision.state
    assert new.status is WorkflowStatus.WAITING_FOR_INPUT
    assert new.step is Step.WAIT_FOR_DOCUMENTS
    assert new.reason is None
    assert new.attempt(Step.VALIDATE_ASSESSMENT) == 2
    assert step_changes(decision, step=Step.VALIDATE_ASSESSMENT) == [
        StepChanged(Step.VALIDATE_ASSESSMENT, 2, StepStatus.RUNNING),
        StepChanged(Step.VALIDATE_ASSESSMENT, 2, StepStatus.COMPLETED),
    ]
    resumed = audits(decision, E.LIFECYCLE_WORKFLOW_RESUMED)
    assert [a.metadata["blocked_reason"] for a in resumed] == [
        "assessment snapshot missing from the start request"
    ]


def test_signals_wait_while_blocked_at_validate() -> None:
    state = new_state()
    blocked = decide(state, start_signal(state, None)).state
    decision = decide(blocked, signal(blocked, S.DOCUMENTS_UPLOADED))

    assert decision.fate is SignalFate.PENDING
    assert decision.state == blocked
    assert decision.effects == ()


@pytest.mark.parametrize("assessment", [None, {"name": "FY25", "status": "draft"}])
def test_a_second_start_is_ignored(assessment: object) -> None:
    state = new_state()
    started = decide(state, start_signal(state, assessment)).state
    decision = decide(started, start_signal(started))

    assert decision.fate is SignalFate.IGNORED
    assert decision.reason == "run already started"
    assert decision.state == started
    assert [a.event_type for a in only_audits(decision)] == [E.LIFECYCLE_WORKFLOW_SIGNAL_IGNORED]


@pytest.mark.parametrize("status", ["draft", "active", "in_review"])
def test_any_open_assessment_status_starts(status: str) -> None:
    state = new_state()
    decision = decide(state, start_signal(state, {"name": "FY25", "status": status}))
    assert decision.state.status is WorkflowStatus.WAITING_FOR_INPUT


@pytest.mark.parametrize("signal_type", [S.DOCUMENTS_UPLOADED, S.FRAMEWORK_SELECTED])
def test_human_inputs_before_the_start_stay_pending(signal_type: S) -> None:
    state = new_state()
    decision = decide(state, signal(state, signal_type, {"framework": "SCF"}))

    assert decision.fate is SignalFate.PENDING
    assert decision.state == state
    assert decision.effects == ()
    assert signal_audits(decision) == []
