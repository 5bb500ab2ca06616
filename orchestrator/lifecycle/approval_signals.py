"""Approval signals: count valid approvals toward the gate's policy; record rejections."""

from __future__ import annotations

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind, SignalEnvelope
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.approval_checks import ApprovalDecision, ApprovalView, approval_problem
from orchestrator.lifecycle.definition import (
    APPROVAL_WAIT_FOR,
    APPROVED_ANY_TIME,
    PRODUCER_OF,
    SCOPE_APPROVAL_DEADLINE,
)
from orchestrator.lifecycle.effects import ArtifactStatusChanged, Audit, ConsumeApproval, Effect
from orchestrator.lifecycle.outcome import Outcome, ignored, pending, rejected
from orchestrator.lifecycle.report_redraft import at_report_gate, redraft_report
from orchestrator.lifecycle.state import RunState
from orchestrator.lifecycle.transitions import complete_current

_E = AuditEventType


def position(state: RunState, step: Step) -> int:
    """Negative: the run has not reached `step`; zero: it is there; positive: past it."""
    current = state.step.order if state.step is not None else -1
    return current - step.order


def _wait_of(kind: ArtifactKind) -> Step:
    return APPROVAL_WAIT_FOR.get(kind, SCOPE_APPROVAL_DEADLINE)


def _timing(state: RunState, kind: ArtifactKind) -> Outcome | None:
    """Too early (pending) or too late (ignored) for an approval of `kind`."""
    where = position(state, _wait_of(kind))
    if where > 0:
        return ignored(state, f"the {_wait_of(kind).value} gate is already open")
    if kind in APPROVED_ANY_TIME:
        # Until its step has run (first time, or again after a rewind) there is no draft to
        # decide on: wait for it, like every other gate's approvals.
        if kind not in state.artifacts:
            return pending(state, f"no {kind.value} draft exists yet")
        if position(state, PRODUCER_OF[kind]) <= 0:
            return pending(state, f"a new {kind.value} draft is being made")
        return None
    if where < 0:
        return pending(state, f"run has not reached the {kind.value} approval wait")
    return None


def approve(state: RunState, signal: SignalEnvelope, approval: ApprovalView | None) -> Outcome:
    kind = APPROVAL_SIGNALS[signal.type]
    early_or_late = _timing(state, kind)
    if early_or_late is not None:
        return early_or_late
    if state.is_approved(kind):
        return ignored(state, f"the current {kind.value} version is already approved")
    problem = approval_problem(state, kind, signal.approval_event_id, approval)
    if problem is not None:
        return rejected(state, problem)
    assert approval is not None
    collected = state.collected.get(kind, ())
    if approval.approver_id in collected:
        return ignored(state, f"{approval.approver_id} already approved this version")
    collected = (*collected, approval.approver_id)
    policy = state.policy(kind)
    met = policy.is_met(collected)
    effects: list[Effect] = [
        ConsumeApproval(
            approval.approval_event_id, kind, approval.artifact_version, opens_gate=met
        ),
        Audit(
            _E.LIFECYCLE_WORKFLOW_APPROVAL_ACCEPTED,
            state.step,
            signal.actor_id,
            {
                "approval_event_id": str(approval.approval_event_id),
                "artifact_kind": kind.value,
                "artifact_version": approval.artifact_version,
                "approver_id": approval.approver_id,
                "approver_roles": list(approval.approver_roles),
                "policy": policy.mode.value,
                "collected": len(collected),
                "gate_open": met,
            },
        ),
    ]
    state = state.with_entry("collected", kind, collected)
    if not met:
        return Outcome(state, effects)
    state = state.gate_opened(kind, approval.artifact_version)
    if kind in APPROVED_ANY_TIME:
        if at_report_gate(state):
            # The report's sign-off named the scope unapproved: draft it again.
            state = redraft_report(state, effects, state.drafted_by.get(ArtifactKind.REPORT))
        return Outcome(state, effects)
    return Outcome(complete_current(state, effects, signal.actor_id), effects)


def reject(state: RunState, signal: SignalEnvelope, approval: ApprovalView | None) -> Outcome:
    """A reviewer rejected or asked for changes: the run waits for an explicit new version."""
    if approval is None:
        return rejected(state, "approval event not found")
    kind = approval.artifact_kind
    early_or_late = _timing(state, kind)
    if early_or_late is not None:
        return early_or_late
    if state.is_approved(kind):
        return ignored(state, f"the current {kind.value} version is already approved")
    problem = approval_problem(
        state, kind, signal.approval_event_id, approval, decision=ApprovalDecision.REJECTED
    )
    if problem is not None:
        return rejected(state, problem)
    version = approval.artifact_version
    effects: list[Effect] = [
        ConsumeApproval(approval.approval_event_id, kind, version, opens_gate=False),
        ArtifactStatusChanged(kind, version, "rejected"),
        Audit(
            _E.LIFECYCLE_WORKFLOW_ARTIFACT_REJECTED,
            state.step,
            signal.actor_id,
            {
                "approval_event_id": str(approval.approval_event_id),
                "artifact_kind": kind.value,
                "artifact_version": version,
                "decision": approval.decision.value,
                "approver_id": approval.approver_id,
            },
        ),
    ]
    state = state.with_entry("rejected", kind, version).without_entry("collected", kind)
    # The reviewer's words are what the people watching the run need to act on.
    state = state.evolve(reason=sent_back_reason(approval))
    if kind not in APPROVED_ANY_TIME:
        state = state.evolve(status=WorkflowStatus.WAITING_FOR_INPUT)
    return Outcome(state, effects)


def sent_back_reason(approval: ApprovalView) -> str:
    """The run's visible reason after a rejection: who, what, and the comment."""
    said = (approval.comment or "").strip() or "no comment given"
    return (
        f"{approval.artifact_kind.value} v{approval.artifact_version} "
        f"{approval.decision.value} by {approval.approver_id}: {said}"
    )
