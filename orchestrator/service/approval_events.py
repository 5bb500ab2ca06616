"""Recording a reviewer's decision on one exact artifact version."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict
from sqlalchemy import insert
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import InvalidInput, NotFound, SignalRejected
from orchestrator.contracts.identity import Actor, Kick
from orchestrator.contracts.signals import ArtifactKind, SignalFate, SignalType
from orchestrator.contracts.text import require_nul_free
from orchestrator.db.session import transaction
from orchestrator.db.tables import APPROVALS
from orchestrator.engine import messages as fleet
from orchestrator.engine.inbox import Recorded, insert_signal
from orchestrator.engine.precheck import reject_if_invalid
from orchestrator.engine.run_rows import RunRecord
from orchestrator.jobs.artifacts import find_artifact
from orchestrator.lifecycle.approval_checks import ApprovalDecision
from orchestrator.service.producer import load_run, signal_envelope


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
                    comment: str | None = None, kick: Kick = fleet.kick) -> ApprovalEventView:
    """The approval event the approval signal will name (approval_event_id)."""
    try:
        kind, verdict = ArtifactKind(artifact_kind), ApprovalDecision(decision)
    except ValueError as error:
        raise InvalidInput(str(error)) from error
    if not approver_role.strip():
        raise InvalidInput("approver_role must not be empty")
    require_nul_free(approver_role=approver_role, comment=comment)
    with transaction() as session:
        run = load_run(session, actor, run_id)
        artifact = find_artifact(session, run.id, kind, artifact_version)
        if artifact is None:
            raise NotFound(f"run {run_id} has no {kind.value} version {artifact_version}")
        artifact_id = artifact.artifact_id
        event_id = uuid.uuid4()
        session.execute(insert(APPROVALS), {
            "id": event_id, "tenant_id": run.tenant_id, "organization_id": run.organization_id,
            "assessment_id": run.assessment_id, "run_id": run.id, "artifact_id": artifact_id,
            "artifact_kind": kind.value, "artifact_version": artifact_version,
            "approver_id": actor.actor_id, "approver_role": approver_role,
            "decision": verdict.value, "comment": comment, "created_at": utcnow(),
            "consumed_by_signal_id": None, "consumed_at": None})
        recorded = None
        if verdict is not ApprovalDecision.APPROVED:
            recorded = _announce_rejection(session, run, actor, event_id)
        view = ApprovalEventView(id=event_id, artifact_id=artifact_id, artifact_kind=kind,
                                 artifact_version=artifact_version, approver_id=actor.actor_id,
                                 approver_role=approver_role, decision=verdict)
    if recorded is not None and recorded.fate is SignalFate.REJECTED:
        raise SignalRejected(recorded.reason or "rejection refused",
                             approval_event_id=str(view.id))
    if recorded is not None:
        kick(run_id)
    return view


def _announce_rejection(session: Session, run: RunRecord, actor: Actor,
                        event_id: uuid.UUID) -> Recorded:
    """A rejection reaches the run as a signal written with the event itself."""
    envelope = signal_envelope(run, actor.actor_id, SignalType.APPROVAL_REJECTED,
                         f"approval:{event_id}", run.trace_id, approval_event_id=event_id)
    return reject_if_invalid(session, run, envelope, insert_signal(session, envelope))
