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
    VALID_ASSESSMENT,
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

BEFORE_FRAMEWORK = [
    Step.WAIT_FOR_DOCUMENTS,
    Step.INGEST_DOCUMENTS,
    Step.INDEX_KB,
    Step.RUN_SCF_PRE_ANALYSIS,
]
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
        StepChanged(Step.CREATE_SCOPE, 1, StepStatus.RUNNING),
    ]
    assert enqueued(decision)[0].parameters["framework"] == "NIST CSF 2.0"


def test_several_frameworks_are_selected_at_once() -> None:
    state = drive_to(Step.WAIT_FOR_FRAMEWORK_SELECTION)
    chosen = signal(
        state, S.FRAMEWORK_SELECTED, {"frameworks": [" SOC 2", "ISO 27001:2022", "SOC 2", ""]}
    )
    decision = decide(state, chosen)
    assert decision.fate is SignalFate.APPLIED
    assert decision.state.frameworks == ("SOC 2", "ISO 27001:2022")
    assert decision.state.framework == "SOC 2; ISO 27001:2022"
    parameters = enqueued(decision)[0].parameters
    assert parameters["frameworks"] == ["SOC 2", "ISO 27001:2022"]


def test_the_catalogue_pins_of_the_start_reach_every_job() -> None:
    pins = {"Secure Controls Framework (SCF)": "43dc5897-ea2b-58bc-b915-506b59f3480b"}
    fresh = new_state()
    started = decide(
        fresh,
        signal(
            fresh, S.WORKFLOW_START_REQUESTED, {"assessment": VALID_ASSESSMENT, "catalogs": pins}
        ),
    )
    assert dict(started.state.catalogs) == pins
    state = drive_to(Step.WAIT_FOR_FRAMEWORK_SELECTION, started.state)
    assert dict(state.catalogs) == pins
    decision = decide(state, framework_signal(state, "SOC 2"))
    assert enqueued(decision)[0].parameters["catalogs"] == pins
    # Reprocessing the scope later drafts it on the same pinned versions.
    at_soa = drive_to(Step.WAIT_FOR_SOA_APPROVAL, decision.state)
    again = decide(
        at_soa,
        signal(
            at_soa,
            S.STEP_REPROCESS_REQUESTED,
            {"step": "create_scope", "new_version": True, "reason": "new input"},
        ),
    )
    assert again.fate is SignalFate.APPLIED
    assert enqueued(again)[0].parameters["catalogs"] == pins


def test_malformed_catalogue_pins_are_rejected() -> None:
    fresh = new_state()
    decision = decide(
        fresh,
        signal(
            fresh, S.WORKFLOW_START_REQUESTED, {"assessment": VALID_ASSESSMENT, "catalogs": ["x"]}
        ),
    )
    assert decision.fate is SignalFate.REJECTED
    assert decision.reason == "catalogs must map catalogue names to version ids"


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
    assert decision.reason == (
        "framework_selected needs a non-empty 'framework' or 'frameworks' list"
    )
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
    assert [c.signal.type for c in decided] == [S.WORKFLOW_START_REQUESTED, S.DOCUMENTS_UPLOADED]
    assert inbox.state.step is Step.INGEST_DOCUMENTS
    assert inbox.pending == []


@pytest.mark.parametrize("step", [Step.WAIT_FOR_FRAMEWORK_SELECTION, Step.CREATE_POAM])
def test_documents_uploaded_after_the_wait_is_ignored(step: Step) -> None:
    state = drive_to(step)
    decision = decide(state, signal(state, S.DOCUMENTS_UPLOADED))
    assert decision.fate is SignalFate.IGNORED
    assert decision.reason == "wait_for_documents is already complete"
    assert decision.state == state
