"""Reassessment of what changed: a change to an assessment's evidence (a new version, an
expiry) re-evaluates only the rows of its last approved SoA that the change touches.

Starting one happens in the transaction of the change: a `reassessments` row naming the
approved SoA it starts from and the documents that changed, and an outbox row for the
evaluation job (`analysis.reassess`), sent after commit (the outbox sweep sends it if
that send is lost). The job (`workers.analysis.reassessment`) writes the SoA's next
version only when some row's evidence changed; reviewers then approve exactly those rows
(`approve_row`), each approval bound to the row's content, and the previous approval
covers every other row by reference.

A job that raises leaves the reassessment `failed` with its reason (`record_failure`);
a person may send it again (`retry_reassessment`), which only a failed one takes.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from orchestrator.contracts.audit import SYSTEM_ACTOR, AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import InvalidInput, NotFound, ReassessmentNotFailed
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.busy import retry_busy
from orchestrator.db.continuous_models import Reassessment, RowApproval
from orchestrator.db.models import Artifact, OutboxMessage, WorkflowRun
from orchestrator.db.session import read_transaction, transaction
from orchestrator.engine.audit_rows import append_audit
from orchestrator.service.approved_artifacts import last_approved_soa
from orchestrator.service.document_waits import waiting_documents
from orchestrator.service.producer import load_assessment

REASSESS_TASK = "analysis.reassess"
REASSESS_QUEUE = "analysis"
#: A reassessment's statuses.
PENDING, NO_CHANGE, AWAITING_APPROVAL, APPROVED, FAILED = (
    "pending",
    "no_change",
    "awaiting_approval",
    "approved",
    "failed",
)
#: The longest failure reason kept: the exception's kind and its first line.
MAX_REASON = 500
#: The status of an SoA version a reassessment wrote, until its changed rows are approved.
REASSESSED = "reassessment"


class ReassessmentView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: uuid.UUID
    assessment_id: uuid.UUID
    base_run_id: uuid.UUID
    base_artifact_id: uuid.UUID
    base_version: int
    trigger: str
    changed_documents: list[str]
    status: str
    error: str | None = None
    """Why its evaluation failed (status `failed`): what the job raised."""
    result_artifact_id: uuid.UUID | None
    result_version: int | None
    figures: dict[str, Any] | None
    changed_rows: list[dict[str, Any]]
    """Each changed row: name, content hash (what an approval names), approvals, and
    what it changed in the gap analysis and the POA&M (`drafts`)."""
    follow_on: list[dict[str, Any]] = []
    """The gap analysis's and the POA&M's versions the changed rows were carried into."""
    created_at: datetime
    evaluated_at: datetime | None


def row_sha256(row: dict[str, Any]) -> str:
    """The content hash a row approval is bound to: a changed row's bundle, the SoA row
    with the finding and item it changed (changed_bundles)."""
    return hashlib.sha256(json.dumps(row, sort_keys=True, default=str).encode()).hexdigest()


def _nothing() -> None:
    return None


def start_reassessment(
    session: Session,
    *,
    tenant_id: str,
    assessment_id: uuid.UUID,
    trigger: str,
    trigger_key: str,
    changed: list[uuid.UUID],
    actor_id: str,
) -> Callable[[], None]:
    """Record a reassessment of the assessment's last approved SoA, in `session`; returns
    what sends its job once the caller committed. Nothing when nothing was approved yet,
    or when this trigger started one before."""
    base = last_approved_soa(session, assessment_id)
    if base is None:
        return _nothing
    seen = session.scalar(
        select(Reassessment.id).where(
            Reassessment.assessment_id == assessment_id, Reassessment.trigger_key == trigger_key
        )
    )
    if seen is not None:
        return _nothing
    now = utcnow()
    # Files uploaded after the run's ingestion waited for this: it ingests them, and
    # they changed the evidence as much as the trigger's documents did.
    waiting = [d for d in waiting_documents(session, assessment_id) if d not in changed]
    row = Reassessment(
        tenant_id=tenant_id,
        assessment_id=assessment_id,
        base_run_id=base.run_id,
        base_artifact_id=base.id,
        trigger=trigger,
        trigger_key=trigger_key,
        changed_documents=[str(d) for d in (*changed, *waiting)],
        status=PENDING,
        created_by=actor_id,
        created_at=now,
    )
    session.add(row)
    session.flush()
    return _queue_job(session, row, f"reassess:{row.id}", now)


def _queue_job(
    session: Session, row: Reassessment, task_id: str, now: datetime
) -> Callable[[], None]:
    """The evaluation job's outbox row, in `session`; returns what sends it after commit."""
    body = {"reassessment_id": str(row.id), "step": "reassess"}
    session.add(
        OutboxMessage(
            run_id=row.base_run_id,
            task_name=REASSESS_TASK,
            queue=REASSESS_QUEUE,
            task_id=task_id,
            body=body,
            created_at=now,
            published_at=None,
        )
    )

    def send() -> None:
        from orchestrator.engine.messages import send_job

        send_job(REASSESS_TASK, REASSESS_QUEUE, task_id, body)
        with transaction() as marking:
            outbox = marking.scalar(select(OutboxMessage).where(OutboxMessage.task_id == task_id))
            if outbox is not None and outbox.published_at is None:
                outbox.published_at = utcnow()

    return send


def _view(session: Session, row: Reassessment) -> ReassessmentView:
    base = session.get(Artifact, row.base_artifact_id)
    result = session.get(Artifact, row.result_artifact_id) if row.result_artifact_id else None
    assert base is not None
    changed: list[dict[str, Any]] = []
    follow = follow_on_drafts(session, row)
    if result is not None:
        approvals = {
            a.row_name: a
            for a in session.scalars(
                select(RowApproval).where(RowApproval.artifact_id == result.id)
            )
        }
        for name, bundle in changed_bundles(result, follow).items():
            approval = approvals.get(name)
            content = bundle["soa"]
            changed.append(
                {
                    "row": name,
                    "row_sha256": row_sha256(bundle),
                    "before": content.get("reassessed", {}).get("before"),
                    "drafts": {k: v for k, v in bundle.items() if k != "soa"},
                    "approved_by": approval.approver_id if approval else None,
                    "approved_at": approval.created_at if approval else None,
                }
            )
    return ReassessmentView(
        id=row.id,
        assessment_id=row.assessment_id,
        base_run_id=row.base_run_id,
        base_artifact_id=row.base_artifact_id,
        base_version=base.version,
        trigger=row.trigger,
        changed_documents=list(row.changed_documents),
        status=row.status,
        error=row.error if row.status == FAILED else None,
        result_artifact_id=row.result_artifact_id,
        result_version=result.version if result else None,
        figures=row.figures,
        changed_rows=changed,
        follow_on=[
            {"kind": a.kind, "artifact_id": a.id, "version": a.version, "status": a.status}
            for a in follow
        ],
        created_at=row.created_at,
        evaluated_at=row.evaluated_at,
    )


def changed_rows(artifact: Artifact) -> dict[str, dict[str, Any]]:
    """The rows a reassessment changed in `artifact`, by their name."""
    names = set(artifact.content.get("reassessment", {}).get("changed_rows", []))
    return {
        row_key(row): row
        for row in artifact.content.get("requirements", [])
        if isinstance(row, dict) and row_key(row) in names
    }


def follow_on_drafts(session: Session, reassessment: Reassessment) -> list[Artifact]:
    """The gap analysis and POA&M versions a reassessment carried its changed rows into."""
    return list(
        session.scalars(
            select(Artifact)
            .where(
                Artifact.run_id == reassessment.base_run_id,
                Artifact.created_by_job_id == f"reassessment:{reassessment.id}",
                Artifact.kind != ArtifactKind.SOA.value,
            )
            .order_by(Artifact.kind)
        )
    )


def changed_bundles(soa: Artifact, follow: list[Artifact]) -> dict[str, dict[str, Any]]:
    """Each changed SoA row with what it changed in the drafts after it: {"soa": row,
    "gap_analysis": {"change": opened|changed|closed, "row": finding}, "poam": ...}."""
    bundles = {name: {"soa": row} for name, row in changed_rows(soa).items()}
    for artifact in follow:
        names = set(artifact.content.get("reassessment", {}).get("changed_rows", []))
        listed = "gaps" if artifact.kind == ArtifactKind.GAP_ANALYSIS.value else "items"
        open_rows = {
            str(r.get("control_id")): r
            for r in artifact.content.get(listed, [])
            if isinstance(r, dict)
        }
        for name in names & set(bundles):
            found = open_rows.get(name)
            if found is None:
                bundles[name][artifact.kind] = {"change": "closed", "row": None}
                continue
            before = found.get("reassessed", {}).get("before")
            change = "opened" if before is None else "changed"
            bundles[name][artifact.kind] = {"change": change, "row": found}
    return bundles


def row_key(row: dict[str, Any]) -> str:
    """A row's name in a reassessment: "<framework> <requirement_id>"."""
    return f"{row.get('framework')} {row.get('requirement_id')}"


def list_reassessments(actor: Actor, assessment_id: uuid.UUID) -> list[ReassessmentView]:
    with transaction() as session:
        load_assessment(session, actor, assessment_id)
        rows = session.scalars(
            select(Reassessment)
            .where(Reassessment.assessment_id == assessment_id)
            .order_by(Reassessment.created_at, Reassessment.id)
        ).all()
        return [_view(session, row) for row in rows]


def _load(session: Session, actor: Actor, reassessment_id: uuid.UUID) -> Reassessment:
    row = session.get(Reassessment, reassessment_id)
    if row is None or row.tenant_id != actor.tenant_id:
        raise NotFound(f"reassessment {reassessment_id} not found")
    load_assessment(session, actor, row.assessment_id)
    return row


def get_reassessment(actor: Actor, reassessment_id: uuid.UUID) -> ReassessmentView:
    with transaction() as session:
        return _view(session, _load(session, actor, reassessment_id))


def reassessment_of(actor: Actor, artifact_id: uuid.UUID) -> ReassessmentView | None:
    """The reassessment whose changed rows `artifact_id` (a reassessed SoA version) holds,
    or None for a version no reassessment drafted."""
    with read_transaction() as session:
        found = session.scalar(
            select(Reassessment.id).where(
                Reassessment.result_artifact_id == artifact_id,
                Reassessment.tenant_id == actor.tenant_id,
            )
        )
        return _view(session, _load(session, actor, found)) if found is not None else None


@retry_busy
def approve_row(
    actor: Actor,
    reassessment_id: uuid.UUID,
    row: str,
    *,
    row_sha256_seen: str,
    comment: str | None = None,
) -> ReassessmentView:
    """Approve one changed row of a reassessment's version, as read (`row_sha256_seen`);
    the version becomes approved with its last changed row."""
    with transaction() as session:
        found = _load(session, actor, reassessment_id)
        session.refresh(found, with_for_update=True)
        if found.status != AWAITING_APPROVAL or found.result_artifact_id is None:
            raise InvalidInput(
                f"reassessment {reassessment_id} asks no approval (status {found.status})"
            )
        artifact = session.get(Artifact, found.result_artifact_id)
        assert artifact is not None
        follow = follow_on_drafts(session, found)
        rows = changed_bundles(artifact, follow)
        if row not in rows:
            raise InvalidInput(
                f"row {row!r} did not change in this reassessment; changed: "
                f"{', '.join(sorted(rows)) or 'none'}"
            )
        if row_sha256(rows[row]) != row_sha256_seen:
            raise InvalidInput(f"row {row!r} is not the version you read", reason="stale_row")
        if artifact.created_by_job_id == f"reassessment:{found.id}" and found.created_by == (
            actor.actor_id
        ):
            raise InvalidInput("whoever changed the evidence may not approve its reassessment")
        done = session.scalar(
            select(RowApproval).where(
                RowApproval.artifact_id == artifact.id, RowApproval.row_name == row
            )
        )
        if done is None:
            session.add(
                RowApproval(
                    tenant_id=found.tenant_id,
                    reassessment_id=found.id,
                    artifact_id=artifact.id,
                    row_name=row,
                    row_sha256=row_sha256_seen,
                    approver_id=actor.actor_id,
                    comment=comment,
                    created_at=utcnow(),
                )
            )
            session.flush()
        approved = session.scalar(
            select(func.count())
            .select_from(RowApproval)
            .where(RowApproval.artifact_id == artifact.id)
        )
        if approved == len(rows):
            for approved_draft in (artifact, *follow):
                approved_draft.status = "approved"
            found.status = APPROVED
        session.flush()
        return _view(session, found)


def failure_reason(error: BaseException) -> str:
    """What a failed evaluation shows: the exception's kind and the first line of its
    message (a database error's SQL and parameters follow on later lines)."""
    first = next(iter(str(error).strip().splitlines()), "")
    reason = f"{type(error).__name__}: {first}" if first else type(error).__name__
    return reason[:MAX_REASON]


def _audit(
    session: Session, row: Reassessment, event: AuditEventType, details: dict[str, Any], actor: str
) -> None:
    run = session.get(WorkflowRun, row.base_run_id)
    assert run is not None
    append_audit(
        session, run, event, None, {"reassessment_id": str(row.id), **details}, utcnow(), actor
    )


@retry_busy
def record_failure(reassessment_id: uuid.UUID, reason: str) -> str:
    """Mark a pending reassessment failed with `reason` (audited); returns its status (an
    evaluated one stays as it is)."""
    with transaction() as session:
        found = session.get(Reassessment, reassessment_id, with_for_update=True)
        if found is None:
            return "missing"
        if found.status != PENDING:
            return found.status
        found.status = FAILED
        found.error = reason
        _audit(
            session,
            found,
            AuditEventType.LIFECYCLE_WORKFLOW_REASSESSMENT_FAILED,
            {"reason": reason},
            SYSTEM_ACTOR,
        )
        return FAILED


@retry_busy
def retry_reassessment(actor: Actor, reassessment_id: uuid.UUID) -> ReassessmentView:
    """Send a failed reassessment's evaluation again (audited): it is pending until the job
    ends. Refused unless it failed (`ReassessmentNotFailed`); the API's Idempotency-Key
    makes a repeated request answer the first retry."""
    with transaction() as session:
        found = _load(session, actor, reassessment_id)
        session.refresh(found, with_for_update=True)
        if found.status != FAILED:
            raise ReassessmentNotFailed(
                f"reassessment {reassessment_id} is {found.status}: only a failed one is retried"
            )
        retries = session.scalar(
            select(func.count())
            .select_from(OutboxMessage)
            .where(OutboxMessage.task_id.like(f"reassess:{found.id}%"))
        )
        reason = found.error
        found.status = PENDING
        found.error = None
        send = _queue_job(session, found, f"reassess:{found.id}:retry-{retries}", utcnow())
        _audit(
            session,
            found,
            AuditEventType.LIFECYCLE_WORKFLOW_REASSESSMENT_RETRIED,
            {"failed_with": reason, "attempt": int(retries or 0) + 1},
            actor.actor_id,
        )
        session.flush()
        view = _view(session, found)
    send()
    return view
