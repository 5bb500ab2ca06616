"""The ingestion jobs' `Prepare`: parsing, chunking and (for the SoA) embedding, done
before the job's transaction opens. The job's transaction then only records the outcome.

What is computed here is keyed by what it was computed from (a document's id and
checksum, the approved SoA's id, the embedder's name): the job uses it only if the
database still says the same, and otherwise prepares again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import Artifact, Document
from orchestrator.db.storage import put_bytes
from orchestrator.formats.document_errors import DocumentError
from orchestrator.jobs.interface import JobFailure
from orchestrator.knowledge.embedder import Embedder
from orchestrator.knowledge.vectors import embedding_text
from workers.ingestion.chunking import Chunk, chunk_blocks, chunk_id
from workers.ingestion.extract import precheck, require_text
from workers.ingestion.parse import MARKDOWN, ParsedDocument, parse
from workers.ingestion.sandbox import ParserSandbox
from workers.ingestion.soa_markdown import render_soa_markdown
from workers.inputs import latest_artifact


@dataclass(frozen=True)
class Parsed:
    """One document's outcome: its text and chunks, or why it cannot be read."""

    sha256: str
    document: ParsedDocument | None = None
    chunks: list[Chunk] = field(default_factory=list)
    error: DocumentError | None = None


@dataclass(frozen=True)
class DocumentsAhead:
    by_id: dict[uuid.UUID, Parsed]

    def covers(self, documents: list[Document]) -> bool:
        return all(d.id in self.by_id and self.by_id[d.id].sha256 == d.sha256 for d in documents)


def parse_documents(documents: list[Document], sandbox: ParserSandbox) -> DocumentsAhead:
    """Check, parse (in the sandbox) and chunk each document."""
    found: dict[uuid.UUID, Parsed] = {}
    checked: list[tuple[Document, tuple[Path, str]]] = []
    for document in documents:
        try:
            checked.append((document, precheck(document, sandbox.limits)))
        except DocumentError as error:
            found[document.id] = Parsed(document.sha256, error=error)
    if checked:
        with sandbox.parsing([file for _, file in checked]) as outcomes:
            for (document, _), outcome in zip(checked, outcomes, strict=True):
                found[document.id] = _parsed(document.sha256, outcome)
    return DocumentsAhead(found)


def _parsed(sha256: str, outcome: ParsedDocument | DocumentError) -> Parsed:
    try:
        if isinstance(outcome, DocumentError):
            raise outcome
        text = require_text(outcome)
    except DocumentError as error:
        return Parsed(sha256, error=error)
    return Parsed(sha256, document=text, chunks=chunk_blocks(text.blocks))


def uploaded(session: Any, assessment_id: uuid.UUID) -> list[Document]:
    return list(
        session.scalars(
            select(Document)
            .where(Document.assessment_id == assessment_id)
            .order_by(Document.created_at, Document.id)
        )
    )


@dataclass(frozen=True)
class SoaAhead:
    """The approved SoA as a Markdown document: stored, parsed, chunked and embedded."""

    soa_id: uuid.UUID
    soa_version: int
    size_bytes: int
    path: Path
    sha256: str
    parsed: ParsedDocument
    chunks: list[Chunk]
    embedder: str
    vectors: dict[str, Any]
    """Each chunk's vector, by the chunk id it gets in this assessment (empty when they
    were stored in batches instead)."""
    embedded: int = 0
    """Vectors already stored in batches (`workers.ingestion.soa_document.prepare_soa`)."""
    new_chunks: int = 0
    """Chunks already written by that `Prepare`."""


def soa_ahead(
    storage_dir: Path,
    soa: Artifact,
    assessment_id: uuid.UUID,
    embedder: Embedder,
    *,
    embed: bool = True,
) -> SoaAhead:
    markdown = render_soa_markdown(soa.content, soa.version)
    data = markdown.encode()
    # Content-addressed: storing it again (another delivery) writes nothing new.
    path, digest = put_bytes(storage_dir / "documents", data, ".md")
    parsed = parse(markdown, MARKDOWN)
    chunks = chunk_blocks(parsed.blocks)
    texts = [embedding_text(c.heading_path, c.text) for c in chunks]
    vectors: list[Any] = list(embedder.embed(texts)) if chunks and embed else []
    ids = [chunk_id(str(assessment_id), digest, c.ordinal) for c in chunks]
    return SoaAhead(
        soa_id=soa.id,
        soa_version=soa.version,
        size_bytes=len(data),
        path=path,
        sha256=digest,
        parsed=parsed,
        chunks=chunks,
        embedder=embedder.name,
        vectors=dict(zip(ids, vectors, strict=True)) if embed else {},
    )


def approved_soa(session: Any, run_id: uuid.UUID) -> Artifact:
    soa = latest_artifact(session, run_id, ArtifactKind.SOA, status="approved")
    if soa is None:
        raise JobFailure("soa_not_approved", "the run has no approved SoA to ingest")
    return soa
