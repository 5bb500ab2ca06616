"""Approval waits and the scope approval: only a valid, unused event for the current version."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from pydantic import ValidationError

from orchestrator.contracts.signals import ArtifactKind, SignalFate
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.approval_checks import ApprovalDecision, ApprovalView
from orchestrator.lifecycle.decide import decide
from orchestrator.lifecycle.definition import APPROVAL_WAIT_FOR, APPROVED_AT, PRODUCER_OF
from orchestrator.lifecycle.effects import ConsumeApproval
from orchestrator.lifecycle.state import RunState
from tests.support.decisions import (
    APPROVAL_SIGNAL_FOR,
    APPROVAL_WAITS,
    E,
    S,
    approval,
    approval_view,
    audits,
    drive_to,
    effects_of,
    entered,
    new_state,
    only_audits,
    positioned,
    run_to_completion,
    signal,
    step_changes,
)

KINDS = list(APPROVAL_WAIT_FOR)


def _other_kind(kind: ArtifactKind) -> ArtifactKind:
    return next(k for k in [*KINDS, ArtifactKind.SCOPE] if k is not kind)


ViewChange = Callable[[RunState, ArtifactKind], dict[str, Any]]
_SCOPE_REASON = "approval event belongs to another tenant, organization or assessment"
INVALID: dict[str, tuple[ViewChange, Callable[[ArtifactKind], str]]] = {
    "another tenant": (lambda s, k: {"tenant_id": "tenant-b"}, lambda k: _SCOPE_REASON),
    "another organization": (lambda s, k: {"organization_id": "org-b"}, lambda k: _SCOPE_REASON),
    "another assessment": (lambda s, k: {"assessment_id": uuid.uuid4()}, lambda k: _SCOPE_REASON),
    "another artifact kind": (
        lambda s, k: {"artifact_kind": _other_kind(k)},
        lambda k: f"approval event is for {_other_kind(k).value}, not {k.value}",
    ),
    "a newer version": (
        lambda s, k: {"version": 2},
        lambda k: f"approval event is for {k.value} version 2, but version 1 awaits approval",
    ),
    "rejected": (
        lambda s, k: {"decision": ApprovalDecision.REJECTED},
        lambda k: "approval event decision is rejected",
    ),
    "changes requested": (
        lambda s, k: {"decision": ApprovalDecision.CHANGES_REQUESTED},
        lambda k: "approval event decision is changes_requested",
    ),
    "already consumed": (
        lambda s, k: {"consumed": True},
        lambda k: "approval event was already used",
    ),
}


def _assert_rejected_unchanged(
    state: RunState, envelope: Any, view: ApprovalView | None, reason: str
) -> None:
    decision = decide(state, envelope, view)
    assert decision.fate is SignalFate.REJECTED
    assert decision.reason == reason
    assert decision.state == state
    assert not effects_of(decision, ConsumeApproval)
    assert [a.event_type for a in only_audits(decision)] == [E.LIFECYCLE_WORKFLOW_SIGNAL_REJECTED]
    assert only_audits(decision)[0].metadata["reason"] == reason


def test_five_approval_waits_one_per_approvable_artifact() -> None:
    assert APPROVAL_WAITS == (
        Step.WAIT_FOR_SOA_APPROVAL,
        Step.WAIT_FOR_GAP_APPROVAL,
        Step.WAIT_FOR_MATURITY_APPROVAL,
        Step.WAIT_FOR_POAM_APPROVAL,
        Step.WAIT_FOR_REPORT_APPROVAL,
    )
    assert {APPROVED_AT[w] for w in APPROVAL_WAITS} == set(KINDS)


def test_an_approval_signal_must_name_an_event() -> None:
    state = new_state()
    for type_ in APPROVAL_SIGNAL_FOR.values():
        with pytest.raises(ValidationError, match="requires approval_event_id"):
            signal(state, type_, approval_event_id=None)


@pytest.mark.parametrize("kind", KINDS)
def test_a_valid_approval_consumes_the_event_and_opens_the_gate(kind: ArtifactKind) -> None:
    wait = APPROVAL_WAIT_FOR[kind]
    state = drive_to(wait)
    envelope, view = approval(state, kind)
    decision = decide(state, envelope, view)

    assert decision.fate is SignalFate.APPLIED
    assert effects_of(decision, ConsumeApproval) == [
        ConsumeApproval(view.approval_event_id, kind, 1)
    ]
    accepted = audits(decision, E.LIFECYCLE_WORKFLOW_APPROVAL_ACCEPTED)
    assert len(accepted) == 1 and accepted[0].step is wait
    assert (
        accepted[0].metadata.items()
        >= {
            "approval_event_id": str(view.approval_event_id),
            "artifact_kind": kind.value,
            "artifact_version": 1,
            "approver_id": "user:approver",
        }.items()
    )
    new = decision.state
    assert new.approved[kind] == 1
    assert new.is_approved(kind)
    assert entered(decision)[0] is wait.next()
    assert new.step is wait.next()


@pytest.mark.parametrize("case", list(INVALID))
@pytest.mark.parametrize("kind", KINDS)
def test_an_invalid_approval_is_rejected_and_the_run_keeps_waiting(
    kind: ArtifactKind, case: str
) -> None:
    state = drive_to(APPROVAL_WAIT_FOR[kind])
    change, reason = INVALID[case]
    envelope, view = approval(state, kind, **change(state, kind))
    _assert_rejected_unchanged(state, envelope, view, reason(kind))
    assert state.status is WorkflowStatus.WAITING_FOR_APPROVAL


@pytest.mark.parametrize("kind", KINDS)
def test_an_approval_without_its_event_is_rejected(kind: ArtifactKind) -> None:
    state = drive_to(APPROVAL_WAIT_FOR[kind])
    envelope, view = approval(state, kind)
    _assert_rejected_unchanged(state, envelope, None, "approval event not found")
    other = approval_view(state, kind)  # a valid event, but not the one the signal names
    _assert_rejected_unchanged(state, envelope, other, "approval event not found")
    assert view.approval_event_id != other.approval_event_id


@pytest.mark.parametrize("kind", KINDS)
def test_an_approval_of_a_superseded_version_is_rejected(kind: ArtifactKind) -> None:
    state = drive_to(APPROVAL_WAIT_FOR[kind]).with_entry("artifacts", kind, 2)
    envelope, view = approval(state, kind, version=1)
    _assert_rejected_unchanged(
        state,
        envelope,
        view,
        f"approval event is for {kind.value} version 1, but version 2 awaits approval",
    )
    envelope, view = approval(state, kind, version=2)
    decision = decide(state, envelope, view)
    assert decision.fate is SignalFate.APPLIED
    assert decision.state.approved[kind] == 2


@pytest.mark.parametrize("kind", KINDS)
def test_an_approval_with_no_draft_is_rejected(kind: ArtifactKind) -> None:
    wait = APPROVAL_WAIT_FOR[kind]
    state = positioned(wait)
    state = state.evolve(artifacts={k: v for k, v in state.artifacts.items() if k is not kind})
    envelope, view = approval(state, kind, version=1)
    _assert_rejected_unchanged(state, envelope, view, f"no {kind.value} draft exists yet")


@pytest.mark.parametrize("kind", KINDS)
def test_an_approval_before_its_wait_stays_pending(kind: ArtifactKind) -> None:
    producer = PRODUCER_OF[kind]
    for step in (Step.WAIT_FOR_DOCUMENTS, producer):
        state = drive_to(step)
        envelope, view = approval(state, kind, version=1)
        decision = decide(state, envelope, view)
        assert decision.fate is SignalFate.PENDING, step
        assert decision.reason == f"run has not reached the {kind.value} approval wait"
        assert decision.effects == ()
        assert decision.state == state


@pytest.mark.parametrize("kind", KINDS)
def test_an_approval_after_its_gate_opened_is_ignored(kind: ArtifactKind) -> None:
    wait = APPROVAL_WAIT_FOR[kind]
    state = drive_to(wait)
    envelope, view = approval(state, kind)
    after = decide(state, envelope, view).state
    reused = replace(view, consumed=True)
    fresh_envelope, fresh_view = approval(after, kind)
    for env, candidate in ((envelope, reused), (fresh_envelope, fresh_view)):
        decision = decide(after, env, candidate)
        assert decision.fate is SignalFate.IGNORED
        # After the report approval the run is completed, and terminal runs ignore all.
        terminal = after.status is WorkflowStatus.COMPLETED
        assert decision.reason == (
            "run is completed" if terminal else f"the {wait.value} gate is already open"
        )
        assert decision.state == after
        assert not effects_of(decision, ConsumeApproval)
        assert [a.event_type for a in only_audits(decision)] == [
            E.LIFECYCLE_WORKFLOW_SIGNAL_IGNORED
        ]


@pytest.mark.parametrize("kind", KINDS)
def test_an_approval_signal_for_another_wait_does_not_pass_this_one(kind: ArtifactKind) -> None:
    wait = APPROVAL_WAIT_FOR[kind]
    state = drive_to(wait)
    for other in KINDS:
        if other is kind:
            continue
        envelope, view = approval(state, other, version=1)
        decision = decide(state, envelope, view)
        assert decision.state.step is wait
        assert decision.fate in (SignalFate.PENDING, SignalFate.IGNORED)
        assert not effects_of(decision, ConsumeApproval)


# --- the scope approval ---------------------------------------------------------------------


def test_scope_approval_before_the_scope_draft_stays_pending() -> None:
    state = drive_to(Step.CREATE_SCOPE)
    envelope, view = approval(state, ArtifactKind.SCOPE, version=1)
    decision = decide(state, envelope, view)
    assert decision.fate is SignalFate.PENDING
    assert decision.reason == "no scope draft exists yet"
    assert decision.state == state


@pytest.mark.parametrize("step", [Step.CREATE_SOA_DRAFT, Step.WAIT_FOR_SOA_APPROVAL])
def test_scope_approval_records_the_approval_without_advancing(step: Step) -> None:
    state = drive_to(step)
    envelope, view = approval(state, ArtifactKind.SCOPE)
    decision = decide(state, envelope, view)

    assert decision.fate is SignalFate.APPLIED
    new = decision.state
    assert dict(new.approved) == {**state.approved, ArtifactKind.SCOPE: 1}
    assert new.is_approved(ArtifactKind.SCOPE)
    assert (new.step, new.status, new.attempts, new.artifacts, new.active_job_id) == (
        state.step,
        state.status,
        state.attempts,
        state.artifacts,
        state.active_job_id,
    )
    assert effects_of(decision, ConsumeApproval) == [
        ConsumeApproval(view.approval_event_id, ArtifactKind.SCOPE, 1)
    ]
    assert step_changes(decision) == []
    assert len(audits(decision, E.LIFECYCLE_WORKFLOW_APPROVAL_ACCEPTED)) == 1


def test_a_second_scope_approval_is_ignored() -> None:
    state = drive_to(Step.CREATE_SOA_DRAFT)
    envelope, view = approval(state, ArtifactKind.SCOPE)
    approved = decide(state, envelope, view).state
    again_envelope, again_view = approval(approved, ArtifactKind.SCOPE)
    decision = decide(approved, again_envelope, again_view)
    assert decision.fate is SignalFate.IGNORED
    assert decision.reason == "the current scope version is already approved"
    assert decision.state == approved


@pytest.mark.parametrize(
    "step", [Step.INGEST_SOA, Step.WAIT_FOR_GAP_APPROVAL, Step.WAIT_FOR_POAM_APPROVAL]
)
def test_the_scope_may_be_approved_until_the_report_gate(step: Step) -> None:
    """The report's sign-off names the scope: it may be approved while the run goes on."""
    state = drive_to(step)
    envelope, view = approval(state, ArtifactKind.SCOPE)
    decision = decide(state, envelope, view)
    assert decision.fate is SignalFate.APPLIED
    assert decision.state.is_approved(ArtifactKind.SCOPE)
    assert (decision.state.step, decision.state.status) == (state.step, state.status)


def test_a_scope_approval_on_a_closed_run_is_ignored() -> None:
    state, _ = run_to_completion()
    envelope, view = approval(state, ArtifactKind.SCOPE)
    decision = decide(state, envelope, view)
    assert decision.fate is SignalFate.IGNORED and decision.state == state


@pytest.mark.parametrize("case", list(INVALID))
def test_an_invalid_scope_approval_is_rejected(case: str) -> None:
    state = drive_to(Step.CREATE_SOA_DRAFT)
    change, reason = INVALID[case]
    envelope, view = approval(state, ArtifactKind.SCOPE, **change(state, ArtifactKind.SCOPE))
    _assert_rejected_unchanged(state, envelope, view, reason(ArtifactKind.SCOPE))


def test_scope_approval_is_not_a_gate() -> None:
    """Nothing requires the scope to be approved: the SoA wait opens without it."""
    state = drive_to(Step.WAIT_FOR_SOA_APPROVAL)
    envelope, view = approval(state, ArtifactKind.SOA)
    decision = decide(state, envelope, view)
    assert decision.state.step is Step.INGEST_SOA
    assert decision.state.status is WorkflowStatus.RUNNING


def test_an_approval_signal_type_matches_its_artifact_kind() -> None:
    assert APPROVAL_SIGNAL_FOR == {
        ArtifactKind.SCOPE: S.SCOPE_APPROVED,
        ArtifactKind.SOA: S.SOA_APPROVED,
        ArtifactKind.GAP_ANALYSIS: S.GAP_ANALYSIS_APPROVED,
        ArtifactKind.MATURITY_ASSESSMENT: S.MATURITY_APPROVED,
        ArtifactKind.POAM: S.POAM_APPROVED,
        ArtifactKind.REPORT: S.REPORT_APPROVED,
    }
