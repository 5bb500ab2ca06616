"""Reading each document's ingestion outcome (for the API and the CLI)."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select

from orchestrator.contracts.identity import Actor
from orchestrator.db.busy import retry_busy
from orchestrator.db.ingestion_models import DocumentOutcome
from orchestrator.db.models import Document
from orchestrator.db.session import read_transaction
from orchestrator.service.document_waits import UPLOADED, upload_wait
from orchestrator.service.producer import load_assessment


class DocumentOutcomeView(BaseModel):
    document_id: uuid.UUID
    filename: str
    status: str
    """uploaded (not ingested yet), ingested, duplicate or failed."""
    waiting_for: str | None = None
    """An uploaded document's wait: `ingestion` (the run's, or the next run's) or
    `reassessment` (the active run passed ingestion: the next reassessment ingests it)."""
    error_code: str | None = None
    error_message: str | None = None
    media_type: str
    pages: int | None = None
    characters: int = 0
    chunks: int = 0
    duplicate_chunks: int = 0
    duplicate_of: uuid.UUID | None = None
    metadata: dict[str, Any] = {}


@retry_busy
def list_outcomes(actor: Actor, assessment_id: uuid.UUID) -> list[DocumentOutcomeView]:
    with read_transaction() as session:
        load_assessment(session, actor, assessment_id)
        rows = session.execute(
            select(Document, DocumentOutcome)
            .outerjoin(DocumentOutcome, DocumentOutcome.document_id == Document.id)
            .where(Document.assessment_id == assessment_id)
            .order_by(Document.created_at, Document.id)
        ).all()
        wait = upload_wait(session, assessment_id)
        return [_view(document, outcome, wait) for document, outcome in rows]


def _view(document: Document, outcome: DocumentOutcome | None, wait: str) -> DocumentOutcomeView:
    view = DocumentOutcomeView(
        document_id=document.id,
        filename=document.filename,
        status=document.status,
        waiting_for=wait if document.status == UPLOADED else None,
        media_type=document.media_type,
    )
    if outcome is None:
        return view
    return view.model_copy(
        update={
            "error_code": outcome.error_code,
            "error_message": outcome.error_message,
            "pages": outcome.pages,
            "characters": outcome.characters,
            "chunks": outcome.chunks,
            "duplicate_chunks": outcome.duplicate_chunks,
            "duplicate_of": outcome.duplicate_of,
            "metadata": outcome.doc_metadata or {},
        }
    )
