"""Every step transition, parametrized over the 20 steps of the lifecycle."""

from __future__ import annotations

import pytest

from orchestrator.contracts.signals import SignalFate
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import STEP_ORDER, StepKind, StepStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.decide import Decision
from orchestrator.lifecycle.definition import (
    APPROVED_AT,
    MAX_TRANSITIONS_PER_DECISION,
    STEP_SPECS,
)
from orchestrator.lifecycle.effects import CloseAssessment, ConsumeApproval, EnqueueJob, StepChanged
from orchestrator.lifecycle.state import RunState
from orchestrator.lifecycle.transitions import job_id_for
from tests.support.decisions import (
    FRAMEWORK,
    NON_INLINE_STEPS,
    STATUS_FOR_KIND,
    E,
    advance,
    audits,
    completed,
    drive,
    drive_to,
    effects_of,
    enqueued,
    entered,
    lifecycle_view,
    new_state,
    position,
    positioned,
    reloaded,
    step_changes,
)


def _split(decisions: list[Decision], step: Step) -> tuple[Decision, Decision, RunState]:
    entering = next(d for d in decisions if step in entered(d))
    finishing = next(d for d in decisions if step in completed(d))
    return entering, finishing, entering.state


def _full_journey() -> list[Decision]:
    _, decisions = drive(until=lambda s: s.status is WorkflowStatus.COMPLETED)
    return decisions


@pytest.fixture(scope="module")
def journey() -> list[Decision]:
    return _full_journey()


def test_the_lifecycle_has_twenty_steps_in_spec_order() -> None:
    assert len(STEP_ORDER) == 20
    assert MAX_TRANSITIONS_PER_DECISION == 20
    assert STEP_ORDER[0] is Step.VALIDATE_ASSESSMENT
    assert STEP_ORDER[-1] is Step.CLOSE_ASSESSMENT
    assert [s.order for s in STEP_ORDER] == list(range(20))
    assert Step.CLOSE_ASSESSMENT.next() is None
    assert all(a.next() is b for a, b in zip(STEP_ORDER, STEP_ORDER[1:], strict=False))


@pytest.mark.parametrize("step", STEP_ORDER)
def test_each_step_is_entered_once_with_attempt_one(step: Step, journey: list[Decision]) -> None:
    starts = [c for d in journey for c in step_changes(d, StepStatus.RUNNING, step)]
    assert starts == [StepChanged(step, 1, StepStatus.RUNNING)]
    started = [
        a for d in journey for a in audits(d, E.LIFECYCLE_WORKFLOW_STEP_STARTED) if a.step is step
    ]
    assert [a.metadata for a in started] == [{"attempt": 1}]


@pytest.mark.parametrize("step", STEP_ORDER)
def test_each_step_completes_exactly_once(step: Step, journey: list[Decision]) -> None:
    done = [c for d in journey for c in step_changes(d, StepStatus.COMPLETED, step)]
    assert done == [StepChanged(step, 1, StepStatus.COMPLETED)]
    audited = [
        a for d in journey for a in audits(d, E.LIFECYCLE_WORKFLOW_STEP_COMPLETED) if a.step is step
    ]
    assert len(audited) == 1


@pytest.mark.parametrize("step", STEP_ORDER)
def test_entering_a_step_sets_its_status(step: Step, journey: list[Decision]) -> None:
    entering, finishing, state = _split(journey, step)
    kind = STEP_SPECS[step].kind
    if kind is StepKind.INLINE:
        # Inline steps complete in the decision that enters them.
        assert entering is finishing
        return
    assert entering is not finishing
    assert state.step is step
    assert state.status is STATUS_FOR_KIND[kind]
    assert state.attempt(step) == 1
    assert state.reason is None
    if kind is StepKind.JOB:
        assert state.active_job_id == job_id_for(state, step, 1)
    else:
        assert state.active_job_id is None
        assert StepChanged(step, 1, StepStatus.WAITING) in entering.effects


@pytest.mark.parametrize("step", STEP_ORDER)
def test_completing_a_step_enters_the_next_one(step: Step, journey: list[Decision]) -> None:
    _, finishing, _ = _split(journey, step)
    changes = step_changes(finishing)
    done = changes.index(StepChanged(step, 1, StepStatus.COMPLETED))
    following = step.next()
    if following is None:
        assert finishing.state.status is WorkflowStatus.COMPLETED
        assert finishing.state.step is Step.CLOSE_ASSESSMENT
        assert effects_of(finishing, CloseAssessment) == [CloseAssessment()]
        return
    assert changes[done + 1] == StepChanged(following, 1, StepStatus.RUNNING)
    if STEP_SPECS[following].kind is StepKind.INLINE:
        # Only the last step is inline after the start: it closes the assessment at once.
        assert following is Step.CLOSE_ASSESSMENT
        assert finishing.state.status is WorkflowStatus.COMPLETED
        return
    assert finishing.state.step is following
    assert not effects_of(finishing, CloseAssessment)


@pytest.mark.parametrize("step", NON_INLINE_STEPS)
def test_the_completing_decision_applies_one_signal(step: Step, journey: list[Decision]) -> None:
    _, finishing, _ = _split(journey, step)
    assert finishing.fate is SignalFate.APPLIED
    assert entered(finishing) == [step.next()] or (
        step is Step.WAIT_FOR_REPORT_APPROVAL and entered(finishing) == [Step.CLOSE_ASSESSMENT]
    )


@pytest.mark.parametrize("step", [s for s in STEP_ORDER if STEP_SPECS[s].kind is StepKind.JOB])
def test_job_steps_enqueue_their_job(step: Step, journey: list[Decision]) -> None:
    entering, _, state = _split(journey, step)
    spec = STEP_SPECS[step]
    jobs = enqueued(entering)
    assert len(jobs) == 1
    job = jobs[0]
    assert job.job_id == f"{state.run_id}:{step.value}:1"
    assert job.kind is spec.job_kind
    assert (job.step, job.attempt) == (step, 1)
    framework = FRAMEWORK if position(step) > position(Step.WAIT_FOR_FRAMEWORK_SELECTION) else None
    expected: dict[str, object] = {
        "framework": framework,
        "frameworks": [framework] if framework else [],
        "catalogs": {},
    }
    if spec.produces is not None:
        expected |= {"artifact_kind": spec.produces.value, "artifact_version": 1}
    assert job.parameters == expected
    assert audits(entering, E.LIFECYCLE_WORKFLOW_WAITING_FOR_APPROVAL) == []


@pytest.mark.parametrize(
    "step", [s for s in STEP_ORDER if STEP_SPECS[s].kind is StepKind.WAIT_FOR_APPROVAL]
)
def test_approval_waits_announce_the_artifact_version(step: Step, journey: list[Decision]) -> None:
    entering, finishing, _ = _split(journey, step)
    kind = APPROVED_AT[step]
    awaits = STEP_SPECS[step].awaits
    assert awaits is not None
    waiting = audits(entering, E.LIFECYCLE_WORKFLOW_WAITING_FOR_APPROVAL)
    assert [(a.step, a.metadata) for a in waiting] == [
        (step, {"awaits": awaits.value, "artifact_kind": kind.value, "artifact_version": 1})
    ]
    consumed = effects_of(finishing, ConsumeApproval)
    assert len(consumed) == 1
    assert (consumed[0].artifact_kind, consumed[0].artifact_version) == (kind, 1)
    assert finishing.state.approved[kind] == 1
    assert not enqueued(entering)


@pytest.mark.parametrize(
    "step", [s for s in STEP_ORDER if STEP_SPECS[s].kind is StepKind.WAIT_FOR_INPUT]
)
def test_input_waits_announce_what_they_await(step: Step, journey: list[Decision]) -> None:
    entering, _, _ = _split(journey, step)
    awaits = STEP_SPECS[step].awaits
    assert awaits is not None
    waiting = audits(entering, E.LIFECYCLE_WORKFLOW_WAITING_FOR_INPUT)
    assert [(a.step, a.metadata) for a in waiting] == [(step, {"awaits": awaits.value})]


@pytest.mark.parametrize("step", NON_INLINE_STEPS)
def test_positioned_matches_a_driven_run(step: Step) -> None:
    """The kit's constructed states are the states the lifecycle really reaches."""
    driven = drive_to(step)
    assert lifecycle_view(positioned(step, base=driven)) == lifecycle_view(driven)


@pytest.mark.parametrize("step", NON_INLINE_STEPS)
def test_a_constructed_state_advances_like_a_driven_one(step: Step) -> None:
    driven = drive_to(step)
    built = positioned(step, base=driven)
    assert advance(built).state.step is advance(driven).state.step


@pytest.mark.parametrize("step", NON_INLINE_STEPS)
def test_persistence_round_trip_at_every_step(step: Step) -> None:
    state = drive_to(step)
    restored = reloaded(state)
    assert restored == state


def test_every_job_id_is_unique_and_deterministic(journey: list[Decision]) -> None:
    ids = [job.job_id for d in journey for job in enqueued(d)]
    assert len(ids) == len(set(ids)) == 11
    assert all(
        job.job_id == job_id_for(d.state, job.step, job.attempt)
        for d in journey
        for job in enqueued(d)
    )


def test_a_fresh_state_has_no_step() -> None:
    state = new_state()
    assert (state.status, state.step, state.active_job_id) == (WorkflowStatus.PENDING, None, None)
    assert effects_of(advance(state), EnqueueJob) == []
