"""Recording a reviewer's decision on one exact artifact version."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict
from sqlalchemy import insert
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import (
    GateNotReady,
    InvalidInput,
    NotFound,
    RoleNotHeld,
    SignalRejected,
)
from orchestrator.contracts.identity import Actor, Kick
from orchestrator.contracts.ids import new_id
from orchestrator.contracts.signals import ArtifactKind, SignalFate, SignalType
from orchestrator.contracts.text import require_nul_free
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Artifact
from orchestrator.db.session import transaction
from orchestrator.db.tables import APPROVALS
from orchestrator.engine import messages as fleet
from orchestrator.engine.inbox import Recorded, insert_signal
from orchestrator.engine.precheck import reject_if_invalid
from orchestrator.engine.run_rows import RunRecord
from orchestrator.jobs.artifacts import find_artifact
from orchestrator.lifecycle.approval_checks import ApprovalDecision
from orchestrator.service.approval_rights import waiver
from orchestrator.service.approval_seals import seal_of
from orchestrator.service.producer import load_run, signal_envelope
from orchestrator.service.readiness import SHOWN, stored_readiness
from orchestrator.service.review_claims import refuse_unless_holder
from orchestrator.service.roles import GRANT_HINT, held_roles


class ApprovalEventView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: uuid.UUID
    artifact_id: uuid.UUID
    artifact_kind: ArtifactKind
    artifact_version: int
    approver_id: str
    approver_role: str | None
    """The role the request named, if any."""
    approver_roles: list[str]
    """The roles the event carries: the one named, or every role held when it was recorded."""
    decision: ApprovalDecision


@retry_busy
def record_approval(
    actor: Actor,
    run_id: uuid.UUID,
    artifact_kind: str,
    artifact_version: int,
    *,
    decision: str = "approved",
    approver_role: str | None = None,
    comment: str | None = None,
    kick: Kick = fleet.kick,
) -> ApprovalEventView:
    """The approval event the approval signal will name (approval_event_id).

    The event carries the roles its principal holds now: the one `approver_role` names
    (refused unless held), or, when none is named, every role held.
    """
    try:
        kind, verdict = ArtifactKind(artifact_kind), ApprovalDecision(decision)
    except ValueError as error:
        raise InvalidInput(str(error)) from error
    named = approver_role.strip() if approver_role is not None else None
    if named == "":
        raise InvalidInput(
            "approver_role must not be empty (leave it out to act in every role you hold)"
        )
    require_nul_free(approver_role=named, comment=comment)
    with transaction() as session:
        run = load_run(session, actor, run_id)
        artifact = find_artifact(session, run.id, kind, artifact_version)
        if artifact is None:
            raise NotFound(f"run {run_id} has no {kind.value} version {artifact_version}")
        refuse_unless_holder(session, run.id, kind, actor.actor_id)
        roles = _acting_roles(session, run.tenant_id, actor.actor_id, named)
        artifact_id = artifact.artifact_id
        if verdict is ApprovalDecision.APPROVED:
            _refuse_unless_ready(session, run, artifact_id)
        # The gate setting in force now travels with the event, as the roles held do.
        waived = waiver(session, run.tenant_id, kind, artifact_id, actor.actor_id)
        # Sealed to the content as stored now, so a later edit or a replaced citation shows.
        stored = session.get(Artifact, artifact_id)
        assert stored is not None
        seal = seal_of(session, stored.content)
        event_id = new_id()
        session.execute(
            insert(APPROVALS),
            {
                "id": event_id,
                "tenant_id": run.tenant_id,
                "organization_id": run.organization_id,
                "assessment_id": run.assessment_id,
                "run_id": run.id,
                "artifact_id": artifact_id,
                "artifact_kind": kind.value,
                "artifact_version": artifact_version,
                "approver_id": actor.actor_id,
                "approver_role": named,
                "approver_roles": roles,
                "decision": verdict.value,
                "comment": comment,
                "created_at": utcnow(),
                "consumed_by_signal_id": None,
                "consumed_at": None,
                "amender_waiver": waived,
                "content_sha256": seal.content_sha256,
                "cited_documents": seal.cited_documents,
            },
        )
        recorded = None
        if verdict is not ApprovalDecision.APPROVED:
            recorded = _announce_rejection(session, run, actor, event_id)
        view = ApprovalEventView(
            id=event_id,
            artifact_id=artifact_id,
            artifact_kind=kind,
            artifact_version=artifact_version,
            approver_id=actor.actor_id,
            approver_role=named,
            approver_roles=roles,
            decision=verdict,
        )
    if recorded is not None and recorded.fate is SignalFate.REJECTED:
        raise SignalRejected(recorded.reason or "rejection refused", approval_event_id=str(view.id))
    if recorded is not None:
        kick(run_id)
    return view


def _refuse_unless_ready(session: Session, run: RunRecord, artifact_id: uuid.UUID) -> None:
    """An approval of a draft with rows nobody decided (where the gate's policy asks for
    decisions), of an SoA with rows resting on nothing (where it asks for a basis) or of a
    report resting on an unapproved input is refused, naming them."""
    stored = session.get(Artifact, artifact_id)
    assert stored is not None
    ready = stored_readiness(session, run, stored)
    refusal = ready.refusal()
    if refusal is not None:
        raise GateNotReady(refusal, readiness=ready.to_json(listed=SHOWN))


def _acting_roles(session: Session, tenant_id: str, principal: str, named: str | None) -> list[str]:
    """The roles an event carries; a role not held, or no role at all, is refused."""
    held = held_roles(session, tenant_id, principal)
    if named is not None and named not in held:
        holds = f"holds: {', '.join(held)}" if held else "holds no role"
        raise RoleNotHeld(
            f"{principal} does not hold the role {named!r} ({holds}); {GRANT_HINT}",
            approver_role=named,
            held_roles=held,
        )
    if named is None and not held:
        raise RoleNotHeld(
            f"{principal} holds no approver role, so their decision could "
            f"count for no gate; {GRANT_HINT}",
            held_roles=held,
        )
    return [named] if named is not None else held


def _announce_rejection(
    session: Session, run: RunRecord, actor: Actor, event_id: uuid.UUID
) -> Recorded:
    """A rejection reaches the run as a signal written with the event itself."""
    envelope = signal_envelope(
        run,
        actor.actor_id,
        SignalType.APPROVAL_REJECTED,
        f"approval:{event_id}",
        run.trace_id,
        approval_event_id=event_id,
    )
    return reject_if_invalid(session, run, envelope, insert_signal(session, envelope))
