"""Each evidence document judged whole: what kind it is, and whether it was adopted.

Both are read from the document's text (its passages in order, its own title), never
from its file name; a reviewer may amend either with a reason, and the drafts follow the
latest amendment. A document that is not adopted is a template or a blank form: every
one of its passages is set aside, not only those holding a placeholder.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.documents import ADOPTED, NOT_ADOPTED
from orchestrator.db.ingestion_models import DocumentOutcome
from orchestrator.db.judgement_models import DocumentJudgementAmendment
from orchestrator.db.models import Document, DocumentChunk
from orchestrator.knowledge.provenance import SYSTEM_UPLOADER
from workers.analysis.adoption import judge_adoption
from workers.analysis.document_kind import judge_kind
from workers.analysis.unfilled_fields import unfilled_fields

# A title that calls the document a template or a form to fill in.
_SELF_DECLARED = re.compile(r"\b(?:templates?|blank form|fill-?in form|boilerplate)\b", re.I)


@dataclass(frozen=True)
class DocumentJudgement:
    document_id: str
    filename: str
    kind: str  # "policy" | "standard" | "procedure" | "plan" | "record"
    kind_basis: str  # plain words: what in the text decided it
    adopted: bool  # False = template_not_adopted: a template or blank form
    adoption_basis: str  # plain words: the share of prompts and placeholders
    overridden_by: str | None = None  # reviewer actor id when a reviewer set kind/adoption
    override_reason: str | None = None
    record_type: str | None = None  # for records: log, ticket, test report, metrics, ...
    #: Approval, date, owner or company fields left to fill in: drafted, not adopted
    unfilled: tuple[str, ...] = ()

    @property
    def adoption(self) -> str:
        return ADOPTED if self.adopted else NOT_ADOPTED

    def as_row(self) -> dict[str, Any]:
        return {
            "document_id": self.document_id,
            "filename": self.filename,
            "kind": self.kind,
            "kind_basis": self.kind_basis,
            "record_type": self.record_type,
            "adoption": self.adoption,
            "adoption_basis": self.adoption_basis,
            "overridden_by": self.overridden_by,
            "override_reason": self.override_reason,
            "unfilled_fields": list(self.unfilled),
        }


def judge_text(
    document_id: str, filename: str, passages: Sequence[tuple[str, str]]
) -> DocumentJudgement:
    """From the document's passages (heading_path, text) in order; never from the file name."""
    return _judge(document_id, filename, passages, title=None)


def _judge(
    document_id: str, filename: str, passages: Sequence[tuple[str, str]], title: str | None
) -> DocumentJudgement:
    # `filename` is carried for the reader, never read: a policy named log.md is a policy.
    own_title = title or _first_heading(passages)
    adoption = judge_adoption(
        [text for _, text in passages], self_declared=bool(_SELF_DECLARED.search(own_title))
    )
    kind = judge_kind(own_title, passages)
    unfilled = unfilled_fields([text for _, text in passages])
    adopted, basis = adoption.adopted, adoption.basis
    if unfilled and adopted:
        adopted, basis = False, drafted_basis(unfilled)
    return DocumentJudgement(
        document_id=document_id,
        filename=filename,
        kind=kind.kind,
        kind_basis=kind.basis,
        adopted=adopted,
        adoption_basis=basis,
        record_type=kind.record_type,
        unfilled=tuple(unfilled),
    )


def drafted_basis(unfilled: Sequence[str]) -> str:
    more = f"; and {len(unfilled) - 4} more" if len(unfilled) > 4 else ""
    shown = "; ".join(unfilled[:4]) + more
    return (
        "drafted, not adopted: its approval, date, owner or company fields are not filled "
        f"in ({shown}); a reviewer who holds the signed version may mark it adopted"
    )


def _first_heading(passages: Sequence[tuple[str, str]]) -> str:
    for heading, _ in passages:
        if heading:
            return heading.split(" > ")[0]
    return ""


def judge_documents(session: Session, assessment_id: uuid.UUID) -> dict[str, DocumentJudgement]:
    """Every ingested evidence document of the assessment (skip documents uploaded by the system itself: see orchestrator/knowledge/provenance.py SYSTEM_UPLOADER), judged from its chunks, with reviewers' overrides applied. Keyed by str(document_id)."""  # noqa: E501
    documents = session.execute(
        select(Document.id, Document.filename, DocumentOutcome.doc_metadata)
        .join(DocumentOutcome, DocumentOutcome.document_id == Document.id, isouter=True)
        .where(
            Document.assessment_id == assessment_id,
            Document.uploaded_by != SYSTEM_UPLOADER,
            Document.status == "ingested",
        )
        .order_by(Document.created_at, Document.id)
    ).all()
    passages: dict[uuid.UUID, list[tuple[str, str]]] = {row.id: [] for row in documents}
    chunks = session.execute(
        select(DocumentChunk.document_id, DocumentChunk.heading_path, DocumentChunk.text)
        .where(DocumentChunk.assessment_id == assessment_id)
        .order_by(DocumentChunk.document_id, DocumentChunk.ordinal)
    )
    for chunk in chunks:
        if chunk.document_id in passages:
            passages[chunk.document_id].append((chunk.heading_path or "", chunk.text))
    judged = {
        str(row.id): _judge(
            str(row.id), row.filename, passages[row.id], title=_title(row.doc_metadata)
        )
        for row in documents
    }
    return apply_amendments(judged, amendments_of(session, assessment_id))


def _title(metadata: dict[str, Any] | None) -> str | None:
    """The document's own title, as its format records it (front matter, PDF, DOCX)."""
    for key in ("title", "name"):
        value = (metadata or {}).get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def amendments_of(session: Session, assessment_id: uuid.UUID) -> list[DocumentJudgementAmendment]:
    return list(
        session.scalars(
            select(DocumentJudgementAmendment)
            .where(DocumentJudgementAmendment.assessment_id == assessment_id)
            .order_by(DocumentJudgementAmendment.id)
        )
    )


def apply_amendments(
    judged: dict[str, DocumentJudgement], amendments: Sequence[DocumentJudgementAmendment]
) -> dict[str, DocumentJudgement]:
    """The judgements with reviewers' amendments applied, oldest first: the latest value
    of each field wins; a field an amendment leaves empty keeps the earlier value."""
    result = dict(judged)
    for amendment in amendments:
        key = str(amendment.document_id)
        current = result.get(key)
        if current is None:
            continue
        changes: dict[str, Any] = {
            "overridden_by": amendment.actor_id,
            "override_reason": amendment.reason,
        }
        if amendment.kind is not None:
            changes |= {
                "kind": amendment.kind,
                "kind_basis": f"set by a reviewer: {amendment.reason}",
            }
            if amendment.kind != "record":
                changes["record_type"] = None
        if amendment.adoption is not None:
            changes |= {
                "adopted": amendment.adoption == ADOPTED,
                "adoption_basis": f"set by a reviewer: {amendment.reason}",
            }
        result[key] = replace(current, **changes)
    return result
