"""What an approval seals: the digest of the exact content decided on and of every document
version that content cites. Drafts cite a passage by `chunk_id` (evidence citations) or a
document by `document_id` (document rows), at any depth, so both keys are looked for."""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.canonical import canonical_sha256
from orchestrator.db.models import Document, DocumentChunk

_BATCH = 500  # ids per IN list: far below SQLite's bound on parameters


@dataclass(frozen=True)
class Seal:
    content_sha256: str
    cited_documents: dict[str, str]
    """Document id -> the SHA-256 of that version's content."""


@dataclass
class Citations:
    documents: set[uuid.UUID] = field(default_factory=set)
    chunks: set[str] = field(default_factory=set)


def citations_in(content: Any) -> Citations:
    found = Citations()
    pending = [content]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            document = value.get("document_id")
            # A value that is no id is not a document's: a draft may carry free text there.
            if isinstance(document, str | uuid.UUID):
                with contextlib.suppress(ValueError):
                    found.documents.add(uuid.UUID(str(document)))
            chunk = value.get("chunk_id")
            if isinstance(chunk, str) and chunk:
                found.chunks.add(chunk)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return found


def cited_document_ids(session: Session, content: Any) -> set[uuid.UUID]:
    cited = citations_in(content)
    documents = set(cited.documents)
    chunks = sorted(cited.chunks)
    for start in range(0, len(chunks), _BATCH):
        batch = chunks[start : start + _BATCH]
        documents.update(
            session.scalars(
                select(DocumentChunk.document_id).where(DocumentChunk.id.in_(batch)).distinct()
            )
        )
    return documents


def seal_of(session: Session, content: Any) -> Seal:
    cited = sorted(cited_document_ids(session, content))
    sealed: dict[str, str] = {}
    for start in range(0, len(cited), _BATCH):
        batch = cited[start : start + _BATCH]
        rows = session.execute(select(Document.id, Document.sha256).where(Document.id.in_(batch)))
        sealed.update({str(i): digest for i, digest in rows})
    return Seal(canonical_sha256(content), sealed)
