"""Recording a reviewer's decision on one exact artifact version."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select

from orchestrator.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import ApprovalEvent, Artifact
from orchestrator.db.session import transaction
from orchestrator.errors import InvalidInput, NotFound
from orchestrator.lifecycle.approvals import ApprovalDecision
from orchestrator.producer import Actor, load_run


class ApprovalEventView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: uuid.UUID
    artifact_id: uuid.UUID
    artifact_kind: ArtifactKind
    artifact_version: int
    approver_id: str
    approver_role: str
    decision: ApprovalDecision


def record_approval(actor: Actor, run_id: uuid.UUID, artifact_kind: str, artifact_version: int,
                    *, decision: str = "approved", approver_role: str = "assessor",
                    comment: str | None = None) -> ApprovalEventView:
    """The approval event the approval signal will name (approval_event_id)."""
    try:
        kind, verdict = ArtifactKind(artifact_kind), ApprovalDecision(decision)
    except ValueError as error:
        raise InvalidInput(str(error)) from error
    if not approver_role.strip():
        raise InvalidInput("approver_role must not be empty")
    with transaction() as session:
        run = load_run(session, actor, run_id)
        artifact = session.scalar(select(Artifact).where(
            Artifact.run_id == run.id, Artifact.kind == kind.value,
            Artifact.version == artifact_version))
        if artifact is None:
            raise NotFound(f"run {run_id} has no {kind.value} version {artifact_version}")
        event = ApprovalEvent(
            tenant_id=run.tenant_id, organization_id=run.organization_id,
            assessment_id=run.assessment_id, run_id=run.id, artifact_id=artifact.id,
            artifact_kind=kind.value, artifact_version=artifact_version,
            approver_id=actor.actor_id, approver_role=approver_role, decision=verdict.value,
            comment=comment, created_at=utcnow())
        session.add(event)
        session.flush()
        return ApprovalEventView(id=event.id, artifact_id=artifact.id, artifact_kind=kind,
                                 artifact_version=artifact_version, approver_id=actor.actor_id,
                                 approver_role=approver_role, decision=verdict)
