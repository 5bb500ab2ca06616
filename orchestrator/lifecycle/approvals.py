"""Checks an approval event must pass before an approval signal may open a gate."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import StrEnum

from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind, SignalEnvelope
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
    consumed: bool = False


def approval_problem(state: RunState, signal: SignalEnvelope,
                     approval: ApprovalView | None) -> str | None:
    """Why this approval cannot be used now, or None when it is valid."""
    kind = APPROVAL_SIGNALS[signal.type]
    if approval is None or approval.approval_event_id != signal.approval_event_id:
        return "approval event not found"
    if (approval.tenant_id, approval.organization_id, approval.assessment_id) != (
        state.tenant_id, state.organization_id, state.assessment_id
    ):
        return "approval event belongs to another tenant, organization or assessment"
    if approval.artifact_kind != kind:
        return f"approval event is for {approval.artifact_kind.value}, not {kind.value}"
    current = state.artifacts.get(kind)
    if current is None:
        return f"no {kind.value} draft exists yet"
    if approval.artifact_version != current:
        return (f"approval event is for {kind.value} version {approval.artifact_version}, "
                f"but version {current} awaits approval")
    if approval.decision is not ApprovalDecision.APPROVED:
        return f"approval event decision is {approval.decision.value}"
    if approval.consumed:
        return "approval event was already used"
    return None
