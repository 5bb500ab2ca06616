"""Reviewers amend how a document was judged: its kind, and whether it was adopted.

The drafts judge each document from its text (a policy, a procedure, a record, ...; a
template or blank form is `template_not_adopted`). A reviewer who knows better sets
either with a reason; the amendment is kept (who, when, why, before and after), audited
on the assessment's run, and the next draft follows it. Nothing already drafted changes.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.documents import ADOPTIONS, DOCUMENT_KINDS
from orchestrator.contracts.errors import IdempotencyConflict, InvalidInput
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.busy import retry_busy
from orchestrator.db.judgement_models import DocumentJudgementAmendment
from orchestrator.db.models import Artifact, Document, WorkflowRun
from orchestrator.db.session import read_transaction, transaction
from orchestrator.engine.audit_rows import append_audit
from orchestrator.knowledge.provenance import SYSTEM_UPLOADER
from orchestrator.service.producer import load_document

REASON_LIMIT = 2000


def _utc(value: datetime) -> datetime:
    # SQLite hands back naive datetimes; every time stored is UTC.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


class JudgementAmendmentView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    kind: str | None
    adoption: str | None
    kind_before: str | None
    adoption_before: str | None
    actor_id: str
    reason: str
    created_at: datetime


class DocumentJudgementView(BaseModel):
    """A document's judgement as the next draft will read it: the latest draft's (from its
    text) with reviewers' amendments over it. None where neither has said anything yet."""

    model_config = ConfigDict(frozen=True)

    document_id: uuid.UUID
    filename: str
    kind: str | None
    adoption: str | None
    judged_kind: str | None
    judged_adoption: str | None
    overridden_by: str | None
    override_reason: str | None
    amendments: list[JudgementAmendmentView]
    duplicate: bool = False


def _clean(
    kind: str | None, adoption: str | None, reason: str | None
) -> tuple[str | None, str | None, str]:
    if kind is not None and kind not in DOCUMENT_KINDS:
        raise InvalidInput(
            f"kind must be one of {', '.join(DOCUMENT_KINDS)}, not {kind!r}", field="kind"
        )
    if adoption is not None and adoption not in ADOPTIONS:
        raise InvalidInput(
            f"adoption must be one of {', '.join(ADOPTIONS)}, not {adoption!r}", field="adoption"
        )
    if kind is None and adoption is None:
        raise InvalidInput("an amendment sets the kind, the adoption or both")
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("an amendment to a document's judgement needs a reason", field="reason")
    if len(reason) > REASON_LIMIT:
        raise InvalidInput(f"reason must be at most {REASON_LIMIT} characters", field="reason")
    return kind, adoption, reason.strip()


def _judged(session: Session, document: Document) -> dict[str, Any]:
    """The row the latest evidence analysis drafted for the document, if any."""
    content = session.scalar(
        select(Artifact.content)
        .where(
            Artifact.assessment_id == document.assessment_id,
            Artifact.kind == ArtifactKind.EVIDENCE_ANALYSIS.value,
        )
        .order_by(Artifact.created_at.desc(), Artifact.version.desc())
        .limit(1)
    )
    rows = (content or {}).get("documents") or []
    return next((r for r in rows if r.get("document_id") == str(document.id)), {})


def _history(session: Session, document: Document) -> list[DocumentJudgementAmendment]:
    return list(
        session.scalars(
            select(DocumentJudgementAmendment)
            .where(DocumentJudgementAmendment.document_id == document.id)
            .order_by(DocumentJudgementAmendment.id)
        )
    )


def _view(
    session: Session, document: Document, *, duplicate: bool = False
) -> DocumentJudgementView:
    judged = _judged(session, document)
    history = _history(session, document)
    kind, adoption = judged.get("kind"), judged.get("adoption")
    # A drafted row already holds the amendments made before it; the latest ones win.
    for row in history:
        kind = row.kind or kind
        adoption = row.adoption or adoption
    last = history[-1] if history else None
    return DocumentJudgementView(
        document_id=document.id,
        filename=document.filename,
        kind=kind,
        adoption=adoption,
        judged_kind=judged.get("kind"),
        judged_adoption=judged.get("adoption"),
        overridden_by=last.actor_id if last else None,
        override_reason=last.reason if last else None,
        amendments=[
            JudgementAmendmentView(
                id=row.id,
                kind=row.kind,
                adoption=row.adoption,
                kind_before=row.kind_before,
                adoption_before=row.adoption_before,
                actor_id=row.actor_id,
                reason=row.reason,
                created_at=_utc(row.created_at),
            )
            for row in history
        ],
        duplicate=duplicate,
    )


@retry_busy
def document_judgement(
    actor: Actor, assessment_id: uuid.UUID, document_id: uuid.UUID
) -> DocumentJudgementView:
    """How the next draft will judge this document, and every amendment to it."""
    with read_transaction() as session:
        return _view(session, load_document(session, actor, assessment_id, document_id))


@retry_busy
def amend_document_judgement(
    actor: Actor,
    assessment_id: uuid.UUID,
    document_id: uuid.UUID,
    *,
    kind: str | None = None,
    adoption: str | None = None,
    reason: str,
    idempotency_key: str | None = None,
) -> DocumentJudgementView:
    """Set a document's kind and/or adoption, with a reason; the next draft follows it.
    A replay with the same idempotency key answers the first amendment (`duplicate`)."""
    kind, adoption, reason = _clean(kind, adoption, reason)
    request = {"kind": kind, "adoption": adoption, "reason": reason}
    digest = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
    key = idempotency_key or f"auto:{uuid.uuid4()}"
    with transaction() as session:
        document = load_document(session, actor, assessment_id, document_id)
        if document.uploaded_by == SYSTEM_UPLOADER:
            raise InvalidInput(
                f"{document.filename} was written by the orchestrator: it is never evidence"
            )
        existing = session.scalar(
            select(DocumentJudgementAmendment).where(
                DocumentJudgementAmendment.document_id == document.id,
                DocumentJudgementAmendment.idempotency_key == key,
            )
        )
        if existing is not None:
            if existing.request_sha256 != digest:
                raise IdempotencyConflict(
                    "this idempotency key amended the document with a different request"
                )
            return _view(session, document, duplicate=True)
        before = _view(session, document)
        now = utcnow()
        amendment = DocumentJudgementAmendment(
            tenant_id=actor.tenant_id,
            assessment_id=assessment_id,
            document_id=document.id,
            kind=kind,
            adoption=adoption,
            kind_before=before.kind,
            adoption_before=before.adoption,
            actor_id=actor.actor_id,
            reason=reason,
            idempotency_key=key,
            request_sha256=digest,
            created_at=now,
        )
        session.add(amendment)
        session.flush()
        _audit(session, document, amendment, now)
        return _view(session, document)


def _audit(
    session: Session, document: Document, amendment: DocumentJudgementAmendment, now: datetime
) -> None:
    """On the assessment's active run, else its latest: the trail reviewers read."""
    run = session.scalar(
        select(WorkflowRun)
        .where(WorkflowRun.assessment_id == document.assessment_id)
        .order_by((WorkflowRun.active_assessment_id.is_(None)).asc(), WorkflowRun.created_at.desc())
        .limit(1)
    )
    if run is None:
        return  # no run yet: the amendment row is the whole record
    details = {
        "document_id": str(document.id),
        "filename": document.filename,
        "amendment_id": amendment.id,
        "kind": {"before": amendment.kind_before, "after": amendment.kind or amendment.kind_before},
        "adoption": {
            "before": amendment.adoption_before,
            "after": amendment.adoption or amendment.adoption_before,
        },
        "reason": amendment.reason,
    }
    event = AuditEventType.LIFECYCLE_WORKFLOW_DOCUMENT_JUDGEMENT_AMENDED
    append_audit(session, run, event, None, details, now, amendment.actor_id)
