"""Checks an approval event must pass before it may count toward opening a gate."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import StrEnum

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.lifecycle.state import RunState


class ApprovalDecision(StrEnum):
    APPROVED = "approved"
    REJECTED = "rejected"
    CHANGES_REQUESTED = "changes_requested"


@dataclass(frozen=True)
class ApprovalView:
    """The recorded approval event a signal names, as loaded by the coordinator."""

    approval_event_id: uuid.UUID
    tenant_id: str
    organization_id: str
    assessment_id: uuid.UUID
    artifact_kind: ArtifactKind
    artifact_version: int
    decision: ApprovalDecision
    approver_id: str
    approver_roles: tuple[str, ...] = ("assessor",)
    """The roles the event carries: held by its principal when it was recorded."""
    consumed: bool = False
    comment: str | None = None
    amender_waiver: bool = False
    """Recorded by the amender of this version while the tenant's gate setting let
    amenders approve: separation of duties does not bar them."""


def approval_problem(
    state: RunState,
    kind: ArtifactKind,
    event_id: uuid.UUID | None,
    approval: ApprovalView | None,
    decision: ApprovalDecision = ApprovalDecision.APPROVED,
) -> str | None:
    """Why this event cannot count for `kind` now, or None when it is valid."""
    if approval is None or approval.approval_event_id != event_id:
        return "approval event not found"
    if (approval.tenant_id, approval.organization_id, approval.assessment_id) != (
        state.tenant_id,
        state.organization_id,
        state.assessment_id,
    ):
        return "approval event belongs to another tenant, organization or assessment"
    if approval.artifact_kind != kind:
        return f"approval event is for {approval.artifact_kind.value}, not {kind.value}"
    return _version_problem(state, kind, approval) or _decision_problem(
        state, kind, approval, decision
    )


def _version_problem(state: RunState, kind: ArtifactKind, approval: ApprovalView) -> str | None:
    current = state.artifacts.get(kind)
    if current is None:
        return f"no {kind.value} draft exists yet"
    if approval.artifact_version != current:
        return (
            f"approval event is for {kind.value} version {approval.artifact_version}, "
            f"but version {current} awaits approval"
        )
    if state.rejected.get(kind) == current:
        return (
            f"{kind.value} version {current} was sent back by a reviewer; "
            "a new version must be drafted first"
        )
    return None


def _decision_problem(
    state: RunState, kind: ArtifactKind, approval: ApprovalView, expected: ApprovalDecision
) -> str | None:
    if expected is ApprovalDecision.APPROVED:
        if approval.decision is not ApprovalDecision.APPROVED:
            return f"approval event decision is {approval.decision.value}"
    elif approval.decision is ApprovalDecision.APPROVED:
        return "approval event approves; it cannot reject"
    if approval.consumed:
        return "approval event was already used"
    policy = state.policy(kind)
    problem = policy.eligibility_problem(approval.approver_id, approval.approver_roles)
    if problem is not None:
        return problem
    if not policy.separation_of_duties:
        return None
    if state.drafted_by.get(kind) == approval.approver_id and not approval.amender_waiver:
        return f"{approval.approver_id} asked for this draft and may not review it"
    if approval.approver_id in state.earlier_drafters.get(kind, ()):
        # The amender's waiver covers the version they amended, not one they asked for.
        return (
            f"{approval.approver_id} asked for or amended a version since the last approved "
            "one and may not review it"
        )
    return None
