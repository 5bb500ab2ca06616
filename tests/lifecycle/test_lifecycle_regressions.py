"""Regressions: lifecycle defects found by the property tests, fixed and pinned here."""

from __future__ import annotations

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle.decide import decide
from orchestrator.lifecycle.effects import StepChanged
from tests.support.decisions import (
    Inbox,
    approval,
    block_signal,
    cancel_signal,
    new_state,
    positioned,
    resume_signal,
    start_signal,
    step_changes,
)

_OPEN = (StepStatus.RUNNING, StepStatus.WAITING)


def _ledger(changes: list[StepChanged]) -> dict[tuple[Step, int], StepStatus]:
    """Last status of every step execution (step, attempt), as the effect writer keeps it."""
    ledger: dict[tuple[Step, int], StepStatus] = {}
    for change in changes:
        ledger[(change.step, change.attempt)] = change.status
    return ledger


def test_a_start_request_during_a_block_is_kept_until_resume() -> None:
    inbox = Inbox(new_state())
    inbox.deliver(block_signal(inbox.state, "legal hold"))
    assert inbox.state.status is WorkflowStatus.BLOCKED

    decided = inbox.deliver(start_signal(inbox.state))
    assert decided == [], "the start must stay pending while the run is blocked"

    inbox.deliver(resume_signal(inbox.state))
    assert inbox.state.status is WorkflowStatus.WAITING_FOR_INPUT
    assert inbox.state.step is Step.WAIT_FOR_DOCUMENTS


def test_resume_after_an_invalid_start_leaves_no_execution_running() -> None:
    state = new_state()
    blocked = decide(state, start_signal(state, None))
    resumed = decide(blocked.state, resume_signal(blocked.state))
    assert resumed.state.step is Step.WAIT_FOR_DOCUMENTS

    ledger = _ledger(step_changes(blocked) + step_changes(resumed))
    current = (resumed.state.step, resumed.state.attempt(resumed.state.step))
    still_open = [key for key, status in ledger.items() if status in _OPEN and key != current]
    assert still_open == []


def test_cancel_in_front_of_a_closed_gate_names_no_phantom_attempt() -> None:
    previous = positioned(
        Step.WAIT_FOR_POAM_APPROVAL, approved=[ArtifactKind.SOA, ArtifactKind.GAP_ANALYSIS]
    )
    envelope, view = approval(previous, ArtifactKind.POAM)
    blocked = decide(previous, envelope, view).state
    assert (blocked.status, blocked.step) == (WorkflowStatus.BLOCKED, Step.CREATE_REPORT)
    assert blocked.attempt(Step.CREATE_REPORT) == 0

    cancelled = decide(blocked, cancel_signal(blocked))
    assert cancelled.state.status is WorkflowStatus.CANCELLED
    assert all(change.attempt >= 1 for change in step_changes(cancelled))
