"""The Assessment Engine's gates: a step whose required artifacts are not approved blocks."""

from __future__ import annotations

import pytest

from orchestrator.contracts.audit import SYSTEM_ACTOR
from orchestrator.contracts.signals import ArtifactKind, SignalFate
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import STEP_ORDER, StepKind, StepStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.decide import decide
from orchestrator.lifecycle.definition import APPROVAL_WAIT_FOR, APPROVED_AT, STEP_SPECS
from orchestrator.lifecycle.effects import CloseAssessment, StepChanged
from orchestrator.lifecycle.state import RunState
from tests.support.decisions import (
    E,
    S,
    advance,
    audits,
    cancel_signal,
    effects_of,
    enqueued,
    entered,
    job_done,
    position,
    positioned,
    resume_signal,
    signal,
    step_changes,
)

_A = ArtifactKind
GATED = [s for s in STEP_ORDER if STEP_SPECS[s].requires_approved]


def _reachable_cases() -> list[tuple[Step, ArtifactKind]]:
    """(gated step, missing approval) pairs the previous step's completion can run into."""
    cases = []
    for step in GATED:
        previous = STEP_ORDER[position(step) - 1]
        for kind in STEP_SPECS[step].requires_approved:
            # Completing an approval wait approves its own artifact: it cannot be missing.
            if APPROVED_AT.get(previous) is not kind:
                cases.append((step, kind))
    return cases


def _approved_before(step: Step) -> list[ArtifactKind]:
    return [k for k, wait in APPROVAL_WAIT_FOR.items() if position(wait) < position(step)]


def _gate_blocked(step: Step, missing: list[ArtifactKind]) -> RunState:
    """A run blocked in front of `step` because `missing` are not approved."""
    state = positioned(step, approved=[k for k in _approved_before(step) if k not in missing])
    attempts = {s: n for s, n in state.attempts.items() if s is not step}
    reason = f"gate closed before {step.value}: {', '.join(k.value for k in missing)} not approved"
    return state.evolve(
        status=WorkflowStatus.BLOCKED, attempts=attempts, active_job_id=None, reason=reason
    )


def test_the_gates_of_the_spec() -> None:
    gates = {s: STEP_SPECS[s].requires_approved for s in GATED}
    assert gates == {
        Step.INGEST_SOA: (_A.SOA,),
        Step.RUN_EVIDENCE_ANALYSIS: (_A.SOA,),
        Step.CREATE_GAP_ANALYSIS: (_A.SOA,),
        Step.CREATE_MATURITY_ASSESSMENT: (_A.SOA, _A.GAP_ANALYSIS),
        Step.CREATE_POAM: (_A.SOA, _A.GAP_ANALYSIS, _A.MATURITY_ASSESSMENT),
        Step.CREATE_REPORT: (_A.SOA, _A.GAP_ANALYSIS, _A.MATURITY_ASSESSMENT, _A.POAM),
        Step.CLOSE_ASSESSMENT: (
            _A.SOA,
            _A.GAP_ANALYSIS,
            _A.MATURITY_ASSESSMENT,
            _A.POAM,
            _A.REPORT,
        ),
    }


@pytest.mark.parametrize("step, missing", _reachable_cases())
def test_completing_the_previous_step_blocks_at_a_closed_gate(
    step: Step, missing: ArtifactKind
) -> None:
    previous = STEP_ORDER[position(step) - 1]
    state = positioned(
        previous, approved=[k for k in _approved_before(previous) if k is not missing]
    )
    decision = advance(state)

    assert decision.fate is SignalFate.APPLIED
    new = decision.state
    assert new.status is WorkflowStatus.BLOCKED
    assert new.step is step
    assert new.reason == f"gate closed before {step.value}: {missing.value} not approved"
    assert new.blocked_from is None
    assert new.active_job_id is None
    assert new.attempt(step) == 0
    assert step_changes(decision) == [StepChanged(previous, 1, StepStatus.COMPLETED)]
    assert entered(decision) == []
    assert enqueued(decision) == []
    assert effects_of(decision, CloseAssessment) == []
    blocked = audits(decision, E.LIFECYCLE_WORKFLOW_BLOCKED)
    assert [(a.step, a.actor_id, a.metadata) for a in blocked] == [
        (step, SYSTEM_ACTOR, {"reason": new.reason})
    ]
    assert audits(decision, E.LIFECYCLE_WORKFLOW_STEP_STARTED) == []


@pytest.mark.parametrize("step, kind", _reachable_cases())
def test_an_approval_of_an_older_version_does_not_open_the_gate(
    step: Step, kind: ArtifactKind
) -> None:
    previous = STEP_ORDER[position(step) - 1]
    state = positioned(previous)
    state = state.with_entry("artifacts", kind, 2)  # a newer draft; version 1 is approved
    assert state.approved[kind] == 1
    decision = advance(state)
    assert decision.state.status is WorkflowStatus.BLOCKED
    assert decision.state.step is step
    assert kind.value in (decision.state.reason or "")


def test_all_missing_approvals_are_named_in_spec_order() -> None:
    state = positioned(Step.WAIT_FOR_REPORT_APPROVAL, approved=[_A.POAM, _A.SOA])
    decision = advance(state)
    assert decision.state.reason == (
        "gate closed before close_assessment: gap_analysis, maturity_assessment not approved"
    )
    assert decision.state.status is WorkflowStatus.BLOCKED
    assert effects_of(decision, CloseAssessment) == []


@pytest.mark.parametrize("step", GATED)
def test_resuming_a_still_closed_gate_blocks_again(step: Step) -> None:
    missing = [STEP_SPECS[step].requires_approved[0]]
    blocked = _gate_blocked(step, missing)
    decision = decide(blocked, resume_signal(blocked))

    assert decision.fate is SignalFate.APPLIED
    new = decision.state
    assert (new.status, new.step, new.reason) == (WorkflowStatus.BLOCKED, step, blocked.reason)
    assert new.attempt(step) == 0
    assert entered(decision) == []
    assert [a.event_type for a in audits(decision)] == [
        E.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED,
        E.LIFECYCLE_WORKFLOW_RESUMED,
        E.LIFECYCLE_WORKFLOW_BLOCKED,
    ]


@pytest.mark.parametrize("step", GATED)
def test_resuming_an_opened_gate_enters_the_step(step: Step) -> None:
    missing = [STEP_SPECS[step].requires_approved[0]]
    blocked = _gate_blocked(step, missing)
    approved = blocked.with_entry("approved", missing[0], blocked.artifacts[missing[0]])
    decision = decide(approved, resume_signal(approved))

    assert decision.fate is SignalFate.APPLIED
    new = decision.state
    assert entered(decision) == [step]
    assert new.attempt(step) == 1
    assert new.reason is None and new.blocked_from is None
    if STEP_SPECS[step].kind is StepKind.JOB:
        assert (new.status, new.step) == (WorkflowStatus.RUNNING, step)
        assert [j.step for j in enqueued(decision)] == [step]
    else:
        assert new.status is WorkflowStatus.COMPLETED
        assert effects_of(decision, CloseAssessment) == [CloseAssessment()]


@pytest.mark.parametrize("signal_type", [S.JOB_COMPLETED, S.SOA_APPROVED, S.FRAMEWORK_SELECTED])
def test_signals_wait_while_a_gate_is_closed(signal_type: S) -> None:
    blocked = _gate_blocked(Step.CREATE_POAM, [_A.MATURITY_ASSESSMENT])
    decision = decide(blocked, signal(blocked, signal_type, {"framework": "x"}))
    assert decision.fate is SignalFate.PENDING
    assert decision.state == blocked


def test_a_gate_blocked_run_can_be_cancelled() -> None:
    blocked = _gate_blocked(Step.CREATE_REPORT, [_A.POAM])
    decision = decide(blocked, cancel_signal(blocked, "stop"))
    assert decision.state.status is WorkflowStatus.CANCELLED
    assert decision.state.reason == "stop"


def test_a_job_outcome_for_the_previous_step_is_stale_once_gate_blocked() -> None:
    state = positioned(Step.CREATE_GAP_ANALYSIS, approved=[])
    previous = positioned(Step.RUN_EVIDENCE_ANALYSIS, base=state, approved=[])
    outcome = job_done(previous)
    blocked = decide(previous, outcome).state
    assert blocked.status is WorkflowStatus.BLOCKED
    again = decide(blocked, outcome)
    assert again.fate is SignalFate.PENDING  # blocked runs keep every non-control signal
    assert again.state == blocked
