"""Chunk rows, their provenance and each document's outcome, written once however often
a job is delivered. Identical chunks (same text) are stored once per assessment."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from orchestrator.contracts.documents import CURRENT
from orchestrator.db.ingestion_models import ChunkProvenance, DocumentOutcome
from orchestrator.db.models import Document, DocumentChunk
from orchestrator.formats.document_errors import DocumentError
from workers.ingestion.chunking import Chunk, chunk_id
from workers.ingestion.parse import ParsedDocument

UPLOADED = "uploaded"
INGESTED = "ingested"
FAILED = "failed"
DUPLICATE = "duplicate"
"""A document whose text is the same as an earlier one's: it adds no chunks."""


@dataclass(frozen=True)
class WriteCounts:
    stored: int
    new: int
    duplicates: int


class ChunkIndex:
    """Which chunk texts the assessment already holds, loaded once per job."""

    def __init__(self, session: Session, assessment_id: uuid.UUID) -> None:
        # A version in force holds its own passages, whatever a replaced version held.
        rows = session.execute(
            select(DocumentChunk.sha256, DocumentChunk.document_id)
            .join(Document, Document.id == DocumentChunk.document_id)
            .where(DocumentChunk.assessment_id == assessment_id, Document.life_status == CURRENT)
        ).all()
        self.owner: dict[str, uuid.UUID] = {}
        for sha, document_id in rows:
            self.owner.setdefault(sha, document_id)

    def is_duplicate(self, sha: str, document_id: uuid.UUID) -> bool:
        owner = self.owner.get(sha)
        return owner is not None and owner != document_id

    def claim(self, sha: str, document_id: uuid.UUID) -> None:
        self.owner.setdefault(sha, document_id)


def text_sha256(parsed: ParsedDocument) -> str:
    digest = hashlib.sha256()
    for block in parsed.blocks:
        digest.update(" > ".join(block.heading_path).encode())
        digest.update(b"\x1f")
        digest.update(block.text.encode())
        digest.update(b"\x1e")
    return digest.hexdigest()


def write_chunks(
    session: Session,
    document: Document,
    chunks: list[Chunk],
    now: datetime,
    index: ChunkIndex | None = None,
) -> WriteCounts:
    """Insert the chunks the document does not have yet, skipping texts the assessment
    already holds (in this or another document). One bulk insert per table."""
    index = index or ChunkIndex(session, document.assessment_id)
    existing = set(
        session.scalars(select(DocumentChunk.id).where(DocumentChunk.document_id == document.id))
    )
    seen: set[str] = set()
    rows: list[dict[str, object]] = []
    pages: list[dict[str, object]] = []
    stored = duplicates = 0
    for chunk in chunks:
        row_id = chunk_id(str(document.assessment_id), document.sha256, chunk.ordinal)
        sha = chunk.sha256
        if row_id in existing:
            stored += 1
            seen.add(sha)
            continue
        if sha in seen or index.is_duplicate(sha, document.id):
            duplicates += 1
            continue
        seen.add(sha)
        index.claim(sha, document.id)
        rows.append(
            {
                "id": row_id,
                "document_id": document.id,
                "assessment_id": document.assessment_id,
                "ordinal": chunk.ordinal,
                "heading_path": chunk.heading_path,
                "text": chunk.text,
                "sha256": sha,
                "created_at": now,
            }
        )
        if chunk.page_start is not None:
            pages.append(
                {
                    "chunk_id": row_id,
                    "document_id": document.id,
                    "page_start": chunk.page_start,
                    "page_end": chunk.page_end,
                }
            )
        stored += 1
    session.flush()  # the document row goes first: chunks refer to it
    if rows:
        session.execute(insert(DocumentChunk), rows)
    if pages:
        session.execute(insert(ChunkProvenance), pages)
    document.status, document.error, document.chunk_count = INGESTED, None, stored
    session.flush()
    return WriteCounts(stored=stored, new=len(rows), duplicates=duplicates)


def find_same_text(session: Session, document: Document, digest: str) -> DocumentOutcome | None:
    return session.scalar(
        select(DocumentOutcome)
        .join(Document, Document.id == DocumentOutcome.document_id)
        .where(
            Document.life_status == CURRENT,
            DocumentOutcome.assessment_id == document.assessment_id,
            DocumentOutcome.text_sha256 == digest,
            DocumentOutcome.outcome == INGESTED,
            DocumentOutcome.document_id != document.id,
        )
        .limit(1)
    )


def record_outcome(
    session: Session,
    document: Document,
    now: datetime,
    *,
    outcome: str,
    parsed: ParsedDocument | None = None,
    counts: WriteCounts | None = None,
    error: DocumentError | None = None,
    digest: str | None = None,
    duplicate_of: uuid.UUID | None = None,
) -> DocumentOutcome:
    row = session.get(DocumentOutcome, document.id)
    if row is None:
        row = DocumentOutcome(
            document_id=document.id, assessment_id=document.assessment_id, created_at=now
        )
        session.add(row)
    row.outcome, row.media_type = outcome, document.media_type
    row.error_code = error.code.value if error else None
    row.error_message = error.message if error else None
    row.pages = parsed.pages if parsed else None
    row.characters = parsed.characters if parsed else 0
    row.chunks = counts.stored if counts else 0
    row.duplicate_chunks = counts.duplicates if counts else 0
    row.text_sha256, row.duplicate_of = digest, duplicate_of
    row.doc_metadata = dict(parsed.metadata) if parsed else {}
    return row


def mark_failed(session: Session, document: Document, error: DocumentError, now: datetime) -> None:
    document.status, document.error, document.chunk_count = FAILED, error.message, 0
    record_outcome(session, document, now, outcome=FAILED, error=error)


def mark_duplicate(
    session: Session,
    document: Document,
    parsed: ParsedDocument,
    digest: str,
    original: DocumentOutcome,
    now: datetime,
) -> None:
    document.status, document.error, document.chunk_count = DUPLICATE, None, 0
    record_outcome(
        session,
        document,
        now,
        outcome=DUPLICATE,
        parsed=parsed,
        digest=digest,
        duplicate_of=original.document_id,
    )
