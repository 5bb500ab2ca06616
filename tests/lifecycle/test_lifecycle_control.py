"""Run control: block, resume, cancel; terminal runs; signals for another run; signal audits."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind, SignalFate
from orchestrator.contracts.statuses import TERMINAL_STATUSES, WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle.decide import decide
from orchestrator.lifecycle.effects import CancelJobs, StepChanged
from orchestrator.lifecycle.state import RunState
from tests.support.decisions import (
    FATE_AUDIT,
    HUMAN,
    JOB_STEPS,
    NON_INLINE_STEPS,
    E,
    Inbox,
    S,
    approval,
    audits,
    block_signal,
    cancel_signal,
    drive_to,
    effects_of,
    job_done,
    job_failed,
    new_state,
    next_signal,
    only_audits,
    outcome_payload,
    resume_signal,
    run_to_completion,
    signal,
    signal_audits,
    start_signal,
    step_changes,
)

#: One envelope of every signal type, built for a given state.
ALL_SIGNALS = list(S)


def any_signal(state: RunState, type_: S) -> tuple[Any, Any]:
    """A plausible envelope of `type_` (and its approval event) for `state`."""
    if type_ is S.WORKFLOW_START_REQUESTED:
        return start_signal(state), None
    if type_.is_approval:
        return approval(state, APPROVAL_SIGNALS[type_], version=1)
    if type_.is_job_outcome:
        if state.step is None:
            return signal(state, type_, outcome_payload(state, step=Step.INGEST_DOCUMENTS)), None
        return signal(state, type_, outcome_payload(state)), None
    return signal(state, type_, {"framework": "SCF", "reason": "why not"}), None


# --- block and resume ---------------------------------------------------------------------


@pytest.mark.parametrize("step", NON_INLINE_STEPS)
def test_block_then_resume_restores_the_exact_state(step: Step) -> None:
    state = drive_to(step)
    blocked = decide(state, block_signal(state, "auditor away"))

    assert blocked.fate is SignalFate.APPLIED
    b = blocked.state
    assert (b.status, b.step, b.reason, b.blocked_from) == (
        WorkflowStatus.BLOCKED,
        step,
        "auditor away",
        state.status,
    )
    assert b.active_job_id == state.active_job_id
    assert b.attempts == state.attempts
    assert step_changes(blocked) == []
    assert [(a.event_type, a.actor_id, a.metadata) for a in only_audits(blocked.effects[1:])] == [
        (E.LIFECYCLE_WORKFLOW_BLOCKED, HUMAN, {"reason": "auditor away"})
    ]

    resumed = decide(b, resume_signal(b))
    assert resumed.fate is SignalFate.APPLIED
    assert resumed.state == state
    assert step_changes(resumed) == []
    assert [a.event_type for a in only_audits(resumed)] == [
        E.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED,
        E.LIFECYCLE_WORKFLOW_RESUMED,
    ]


def test_block_without_reason_names_its_kind() -> None:
    state = drive_to(Step.INDEX_KB)
    assert decide(state, block_signal(state)).state.reason == "blocked: manual_intervention"
    decision = decide(state, block_signal(state, kind="configuration"))
    assert decision.state.reason == "blocked: configuration"
    assert decision.state.block_kind == "configuration"


def test_block_of_an_unknown_kind_is_rejected() -> None:
    state = drive_to(Step.INDEX_KB)
    decision = decide(state, block_signal(state, "why", kind="coffee_break"))
    assert decision.fate is SignalFate.REJECTED
    assert decision.state == state


@pytest.mark.parametrize("reason", ["", "   "])
def test_cancel_needs_a_reason(reason: str) -> None:
    state = drive_to(Step.INDEX_KB)
    decision = decide(state, signal(state, S.ASSESSMENT_CANCELLED, {"reason": reason}))
    assert decision.fate is SignalFate.REJECTED
    assert decision.reason == "cancelling needs a reason"
    assert decision.state == state


def test_a_pending_run_can_be_blocked_and_resumed() -> None:
    state = new_state()
    blocked = decide(state, block_signal(state)).state
    assert (blocked.status, blocked.blocked_from) == (
        WorkflowStatus.BLOCKED,
        WorkflowStatus.PENDING,
    )
    resumed = decide(blocked, resume_signal(blocked)).state
    assert resumed == state


@pytest.mark.parametrize("step", NON_INLINE_STEPS)
def test_while_blocked_the_advancing_signal_stays_pending_then_applies(step: Step) -> None:
    state = drive_to(step)
    inbox = Inbox(state)
    inbox.deliver(block_signal(state))
    blocked = inbox.state
    advancing, view = next_signal(state)
    assert inbox.deliver(advancing, view) == []
    assert inbox.state == blocked
    assert inbox.pending == [advancing]
    pending_call = inbox.calls[-1]
    assert pending_call.decision.effects == ()
    assert pending_call.decision.reason == "run is blocked"

    decided = inbox.deliver(resume_signal(state))
    assert [c.signal.type for c in decided] == [S.ASSESSMENT_RESUMED, advancing.type]
    assert [c.decision.fate for c in decided] == [SignalFate.APPLIED] * 2
    assert inbox.pending == []
    assert inbox.state == decide(state, advancing, view).state


def test_blocking_a_blocked_run_is_ignored() -> None:
    state = drive_to(Step.CREATE_SCOPE)
    blocked = decide(state, block_signal(state, "one")).state
    decision = decide(blocked, block_signal(blocked, "two"))
    assert decision.fate is SignalFate.IGNORED
    assert decision.reason == "run is already blocked"
    assert decision.state == blocked
    # The first block still decides where resuming returns to.
    assert decide(blocked, resume_signal(blocked)).state == state


@pytest.mark.parametrize("step", NON_INLINE_STEPS)
def test_resume_of_a_run_that_is_not_blocked_is_ignored(step: Step) -> None:
    state = drive_to(step)
    decision = decide(state, resume_signal(state))
    assert decision.fate is SignalFate.IGNORED
    assert decision.reason == "run is not blocked"
    assert decision.state == state


def test_a_failed_run_ignores_block_and_resume() -> None:
    state = drive_to(Step.CREATE_SOA_DRAFT)
    failed = decide(state, job_failed(state)).state
    for type_ in (S.ASSESSMENT_BLOCKED, S.ASSESSMENT_RESUMED):
        decision = decide(failed, signal(failed, type_))
        assert decision.fate is SignalFate.IGNORED
        assert decision.state == failed


def test_a_job_outcome_during_a_block_applies_after_resume() -> None:
    state = drive_to(Step.INGEST_SOA)
    inbox = Inbox(state)
    inbox.deliver(block_signal(state))
    inbox.deliver(job_done(state))
    assert inbox.state.status is WorkflowStatus.BLOCKED
    inbox.deliver(resume_signal(state))
    assert inbox.state.step is Step.RUN_EVIDENCE_ANALYSIS
    assert inbox.state.status is WorkflowStatus.RUNNING


# --- cancel -------------------------------------------------------------------------------------


@pytest.mark.parametrize("step", NON_INLINE_STEPS)
def test_cancel_is_terminal_and_stops_the_jobs(step: Step) -> None:
    state = drive_to(step)
    decision = decide(state, cancel_signal(state, "scope changed"))

    assert decision.fate is SignalFate.APPLIED
    new = decision.state
    assert new.status is WorkflowStatus.CANCELLED
    assert new.status.is_terminal
    assert new.reason == "scope changed"
    assert new.active_job_id is None
    assert new.step is step
    assert effects_of(decision, CancelJobs) == [CancelJobs("scope changed")]
    assert step_changes(decision) == [StepChanged(step, 1, StepStatus.CANCELLED)]
    assert [(a.step, a.metadata) for a in audits(decision, E.LIFECYCLE_WORKFLOW_CANCELLED)] == [
        (step, {"reason": "scope changed"})
    ]


def test_cancel_of_a_pending_run() -> None:
    state = new_state()
    decision = decide(state, cancel_signal(state))
    assert decision.state.status is WorkflowStatus.CANCELLED
    assert decision.state.reason == "assessment withdrawn"
    assert step_changes(decision) == []
    assert effects_of(decision, CancelJobs) == [CancelJobs("assessment withdrawn")]


def test_cancel_of_a_blocked_run() -> None:
    state = drive_to(Step.RUN_EVIDENCE_ANALYSIS)
    blocked = decide(state, block_signal(state)).state
    decision = decide(blocked, cancel_signal(blocked))
    assert decision.state.status is WorkflowStatus.CANCELLED
    assert step_changes(decision) == [
        StepChanged(Step.RUN_EVIDENCE_ANALYSIS, 1, StepStatus.CANCELLED)
    ]


def test_cancel_of_a_failed_run_leaves_the_failed_step_alone() -> None:
    state = drive_to(Step.CREATE_GAP_ANALYSIS)
    failed = decide(state, job_failed(state)).state
    decision = decide(failed, cancel_signal(failed))
    assert decision.state.status is WorkflowStatus.CANCELLED
    assert step_changes(decision) == []
    assert len(effects_of(decision, CancelJobs)) == 1


@pytest.mark.parametrize("step", JOB_STEPS)
def test_the_outcome_of_a_cancelled_job_is_ignored(step: Step) -> None:
    state = drive_to(step)
    cancelled = decide(state, cancel_signal(state)).state
    for outcome in (job_done(state), job_failed(state)):
        decision = decide(cancelled, outcome)
        assert decision.fate is SignalFate.IGNORED
        assert decision.reason == "run is cancelled"
        assert decision.state == cancelled


# --- terminal runs ----------------------------------------------------------------------------


def _terminal_states() -> list[RunState]:
    completed, _ = run_to_completion()
    at_wait = drive_to(Step.WAIT_FOR_GAP_APPROVAL)
    cancelled = decide(at_wait, cancel_signal(at_wait)).state
    pending = new_state()
    cancelled_early = decide(pending, cancel_signal(pending)).state
    return [completed, cancelled, cancelled_early]


@pytest.mark.parametrize(
    "terminal", _terminal_states(), ids=["completed", "cancelled", "cancelled-before-start"]
)
@pytest.mark.parametrize("type_", ALL_SIGNALS)
def test_terminal_runs_ignore_every_signal(terminal: RunState, type_: S) -> None:
    assert terminal.status in TERMINAL_STATUSES
    envelope, view = any_signal(terminal, type_)
    decision = decide(terminal, envelope, view)
    assert decision.fate is SignalFate.IGNORED
    assert decision.reason == f"run is {terminal.status.value}"
    assert decision.state == terminal
    assert [a.event_type for a in only_audits(decision)] == [E.LIFECYCLE_WORKFLOW_SIGNAL_IGNORED]


def test_the_eight_statuses() -> None:
    assert {s.value for s in WorkflowStatus} == {
        "pending",
        "running",
        "waiting_for_input",
        "waiting_for_approval",
        "blocked",
        "failed",
        "cancelled",
        "completed",
    }
    assert {WorkflowStatus.CANCELLED, WorkflowStatus.COMPLETED} == TERMINAL_STATUSES
    assert not WorkflowStatus.FAILED.is_terminal


# --- signals for another run ------------------------------------------------------------------

FOREIGN = {
    "run": {"run_id": uuid.uuid4()},
    "tenant": {"tenant_id": "tenant-b"},
    "organization": {"organization_id": "org-b"},
    "assessment": {"assessment_id": uuid.uuid4()},
}


@pytest.mark.parametrize("field", list(FOREIGN))
@pytest.mark.parametrize("type_", ALL_SIGNALS)
def test_signals_for_another_run_are_rejected(field: str, type_: S) -> None:
    for state in (new_state(), drive_to(Step.WAIT_FOR_SOA_APPROVAL)):
        envelope, view = any_signal(state, type_)
        foreign = envelope.model_copy(update=FOREIGN[field])
        decision = decide(state, foreign, view)
        assert decision.fate is SignalFate.REJECTED
        assert decision.reason == "signal does not belong to this run"
        assert decision.state == state
        assert [a.event_type for a in only_audits(decision)] == [
            E.LIFECYCLE_WORKFLOW_SIGNAL_REJECTED
        ]


def test_a_foreign_signal_is_rejected_even_by_a_terminal_run() -> None:
    completed, _ = run_to_completion()
    envelope = resume_signal(completed).model_copy(update={"tenant_id": "tenant-b"})
    assert decide(completed, envelope).fate is SignalFate.REJECTED


# --- the audit of every decided signal --------------------------------------------------------


def _decisions_of_every_fate() -> list[tuple[str, RunState, Any, Any]]:
    wait = drive_to(Step.WAIT_FOR_MATURITY_APPROVAL)
    soa_envelope, soa_view = approval(wait, ArtifactKind.SOA)
    mat_envelope, mat_view = approval(wait, ArtifactKind.MATURITY_ASSESSMENT)
    bad_envelope, bad_view = approval(wait, ArtifactKind.MATURITY_ASSESSMENT, version=9)
    poam_envelope, poam_view = approval(wait, ArtifactKind.POAM, version=1)
    return [
        ("applied", wait, mat_envelope, mat_view),
        ("ignored", wait, soa_envelope, soa_view),
        ("rejected", wait, bad_envelope, bad_view),
        ("pending", wait, poam_envelope, poam_view),
        ("applied-control", wait, block_signal(wait), None),
        ("ignored-control", wait, resume_signal(wait), None),
    ]


@pytest.mark.parametrize(
    "name, state, envelope, view",
    _decisions_of_every_fate(),
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_every_decided_signal_is_audited_exactly_once(
    name: str, state: RunState, envelope: Any, view: Any
) -> None:
    decision = decide(state, envelope, view)
    if decision.fate is SignalFate.PENDING:
        assert name == "pending"
        assert decision.effects == ()
        return
    about_signal = signal_audits(decision)
    assert len(about_signal) == 1
    audit = about_signal[0]
    assert decision.effects[0] is audit
    assert audit.event_type is FATE_AUDIT[decision.fate]
    assert audit.step is state.step
    assert audit.actor_id == envelope.actor_id
    expected: dict[str, Any] = {
        "signal_type": envelope.type.value,
        "signal_id": str(envelope.signal_id),
        "fate": decision.fate.value,
    }
    if decision.reason:
        expected["reason"] = decision.reason
    assert audit.metadata == expected
    assert name.split("-")[0] == decision.fate.value


@pytest.mark.parametrize("step", NON_INLINE_STEPS)
def test_decide_is_deterministic_and_does_not_touch_its_input(step: Step) -> None:
    state = drive_to(step)
    envelope, view = next_signal(state)
    snapshot = (state.context(), state.status, state.step, state.reason)
    first = decide(state, envelope, view)
    second = decide(state, envelope, view)
    assert first == second
    assert (state.context(), state.status, state.step, state.reason) == snapshot
