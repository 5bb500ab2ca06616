"""Inputs from people: documents_uploaded and framework_selected, early, on time and late."""

from __future__ import annotations

import pytest

from orchestrator.contracts.signals import SignalFate
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle.decide import decide
from orchestrator.lifecycle.effects import StepChanged
from tests.support.decisions import (
    MISSING,
    E,
    Inbox,
    S,
    drive_to,
    enqueued,
    framework_signal,
    new_state,
    next_signal,
    only_audits,
    signal,
    step_changes,
)

BEFORE_FRAMEWORK = [Step.WAIT_FOR_DOCUMENTS, Step.INGEST_DOCUMENTS, Step.INDEX_KB,
                    Step.RUN_SCF_PRE_ANALYSIS]
AFTER_FRAMEWORK = [Step.CREATE_SCOPE, Step.WAIT_FOR_SOA_APPROVAL, Step.CREATE_REPORT]


def test_framework_selected_at_the_wait_completes_it_and_records_the_framework() -> None:
    state = drive_to(Step.WAIT_FOR_FRAMEWORK_SELECTION)
    assert state.status is WorkflowStatus.WAITING_FOR_INPUT
    decision = decide(state, framework_signal(state, "  NIST CSF 2.0 "))

    assert decision.fate is SignalFate.APPLIED
    new = decision.state
    assert new.framework == "NIST CSF 2.0"
    assert (new.step, new.status) == (Step.CREATE_SCOPE, WorkflowStatus.RUNNING)
    assert step_changes(decision)[:2] == [
        StepChanged(Step.WAIT_FOR_FRAMEWORK_SELECTION, 1, StepStatus.COMPLETED),
        StepChanged(Step.CREATE_SCOPE, 1, StepStatus.RUNNING)]
    assert enqueued(decision)[0].parameters["framework"] == "NIST CSF 2.0"


@pytest.mark.parametrize("step", BEFORE_FRAMEWORK)
def test_framework_selected_before_the_wait_stays_pending(step: Step) -> None:
    state = drive_to(step)
    decision = decide(state, framework_signal(state))
    assert decision.fate is SignalFate.PENDING
    assert decision.reason == "run has not reached wait_for_framework_selection"
    assert decision.state == state
    assert decision.effects == ()


@pytest.mark.parametrize("step", AFTER_FRAMEWORK)
def test_framework_selected_after_the_wait_is_ignored(step: Step) -> None:
    state = drive_to(step)
    decision = decide(state, framework_signal(state, "ISO 27001"))
    assert decision.fate is SignalFate.IGNORED
    assert decision.reason == "wait_for_framework_selection is already complete"
    assert decision.state == state
    assert state.framework != "ISO 27001"


@pytest.mark.parametrize("framework", [MISSING, "", "   ", None])
@pytest.mark.parametrize("step", [Step.WAIT_FOR_FRAMEWORK_SELECTION, Step.INDEX_KB])
def test_framework_selected_needs_a_framework(step: Step, framework: object) -> None:
    state = drive_to(step)
    decision = decide(state, framework_signal(state, framework))
    assert decision.fate is SignalFate.REJECTED
    assert decision.reason == "framework_selected needs a non-empty 'framework'"
    assert decision.state == state
    assert [a.event_type for a in only_audits(decision)] == [E.LIFECYCLE_WORKFLOW_SIGNAL_REJECTED]


def test_an_early_framework_choice_applies_when_the_wait_opens() -> None:
    inbox = Inbox(new_state())
    inbox.deliver(framework_signal(inbox.state, "ISO 27001"))
    assert inbox.pending
    for _ in range(6):
        if inbox.state.step is Step.CREATE_SCOPE:
            break
        assert inbox.state.step is not Step.WAIT_FOR_FRAMEWORK_SELECTION
        inbox.deliver(*next_signal(inbox.state))
    assert inbox.pending == []
    assert inbox.state.step is Step.CREATE_SCOPE
    assert inbox.state.framework == "ISO 27001"


def test_conflicting_framework_choices_first_one_wins() -> None:
    state = drive_to(Step.WAIT_FOR_FRAMEWORK_SELECTION)
    inbox = Inbox(state)
    first = inbox.deliver(framework_signal(state, "ISO 27001"))
    second = inbox.deliver(framework_signal(state, "NIST CSF 2.0"))
    assert [c.decision.fate for c in first + second] == [SignalFate.APPLIED, SignalFate.IGNORED]
    assert inbox.state.framework == "ISO 27001"


def test_documents_uploaded_before_the_start_applies_after_it() -> None:
    inbox = Inbox(new_state())
    early = inbox.deliver(signal(inbox.state, S.DOCUMENTS_UPLOADED, {"document_count": 2}))
    assert early == [] and len(inbox.pending) == 1
    decided = inbox.deliver(*next_signal(inbox.state))
    assert [c.signal.type for c in decided] == [S.WORKFLOW_START_REQUESTED,
                                                S.DOCUMENTS_UPLOADED]
    assert inbox.state.step is Step.INGEST_DOCUMENTS
    assert inbox.pending == []


@pytest.mark.parametrize("step", [Step.WAIT_FOR_FRAMEWORK_SELECTION, Step.CREATE_POAM])
def test_documents_uploaded_after_the_wait_is_ignored(step: Step) -> None:
    state = drive_to(step)
    decision = decide(state, signal(state, S.DOCUMENTS_UPLOADED))
    assert decision.fate is SignalFate.IGNORED
    assert decision.reason == "wait_for_documents is already complete"
    assert decision.state == state
