"""Chunk rows for a document, written once however often a job is delivered."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.db.models import Document, DocumentChunk
from workers.ingestion.chunking import Chunk, chunk_id

INGESTED = "ingested"
FAILED = "failed"
UPLOADED = "uploaded"


def write_chunks(session: Session, document: Document, chunks: list[Chunk],
                 now: datetime) -> int:
    """Insert the chunks the document does not have yet; returns how many were new."""
    existing = set(session.scalars(
        select(DocumentChunk.id).where(DocumentChunk.document_id == document.id)))
    new = 0
    for chunk in chunks:
        row_id = chunk_id(str(document.assessment_id), document.sha256, chunk.ordinal)
        if row_id in existing:
            continue
        session.add(DocumentChunk(
            id=row_id, document_id=document.id, assessment_id=document.assessment_id,
            ordinal=chunk.ordinal, heading_path=chunk.heading_path, text=chunk.text,
            sha256=chunk.sha256, created_at=now))
        new += 1
    document.status, document.error, document.chunk_count = INGESTED, None, len(chunks)
    session.flush()
    return new


def mark_failed(document: Document, reason: str) -> None:
    document.status, document.error, document.chunk_count = FAILED, reason, 0
