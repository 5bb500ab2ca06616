"""Ingestion jobs: uploaded documents, and the approved SoA, into searchable chunks.

Run outcome policy:
- A document that cannot be read fails alone, with a typed code (`DocumentErrorCode`)
  and a message; the job succeeds and lists it under `warnings`, and the run goes on.
- When no document yields text (or there are none), the job fails with
  `no_extractable_text` (or `no_documents`), not retryable: retrying cannot help; what
  helps is another document. Each document's outcome is kept with the failure. The
  lifecycle returns the run to `wait_for_documents` (waiting for input) on these codes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.ingestion_models import DocumentOutcome
from orchestrator.db.models import Document
from orchestrator.db.storage import put_bytes
from orchestrator.formats.document_errors import DocumentError
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult
from orchestrator.knowledge.embedder import Embedder
from orchestrator.knowledge.provenance import SYSTEM_UPLOADER
from orchestrator.knowledge.vectors import index_missing
from workers.ingestion.chunking import chunk_blocks
from workers.ingestion.extract import precheck, require_text
from workers.ingestion.parse import MARKDOWN, ParsedDocument, parse
from workers.ingestion.sandbox import ParserSandbox, shared_sandbox
from workers.ingestion.soa_markdown import render_soa_markdown
from workers.ingestion.store import (
    DUPLICATE,
    FAILED,
    INGESTED,
    UPLOADED,
    ChunkIndex,
    find_same_text,
    mark_duplicate,
    mark_failed,
    record_outcome,
    text_sha256,
    write_chunks,
)
from workers.inputs import latest_artifact

NO_DOCUMENTS = "no_documents"
NO_EXTRACTABLE_TEXT = "no_extractable_text"
MAX_WARNINGS = 20


def ingest_documents(context: JobContext, sandbox: ParserSandbox | None = None) -> JobResult:
    """Parse, chunk and store every 'uploaded' document of the assessment.

    Counts cover the whole assessment, so a re-delivered job reports what the first
    delivery reported.
    """
    session = context.session
    sandbox = sandbox or shared_sandbox()
    documents = list(
        session.scalars(
            select(Document)
            .where(Document.assessment_id == context.request.assessment_id)
            .order_by(Document.created_at, Document.id)
        )
    )
    index = ChunkIndex(session, context.request.assessment_id)
    checked: list[tuple[Document, tuple[Path, str]]] = []
    for document in documents:
        if document.status != UPLOADED:
            continue
        try:
            checked.append((document, precheck(document, sandbox.limits)))
        except DocumentError as error:
            mark_failed(session, document, error, utcnow())
    # The parser reads the next document while this one is chunked and stored.
    # Leaving the block for any reason (a database error storing a chunk) frees the sandbox.
    with sandbox.parsing([file for _, file in checked]) as outcomes:
        for (document, _), outcome in zip(checked, outcomes, strict=True):
            try:
                if isinstance(outcome, DocumentError):
                    raise outcome
                store_parsed(session, document, require_text(outcome), index)
            except DocumentError as error:
                mark_failed(session, document, error, utcnow())
    session.flush()
    return _result(session, documents)


def store_parsed(
    session: Session, document: Document, parsed: ParsedDocument, index: ChunkIndex
) -> None:
    now = utcnow()
    digest = text_sha256(parsed)
    original = find_same_text(session, document, digest)
    if original is not None:
        mark_duplicate(session, document, parsed, digest, original, now)
    else:
        counts = write_chunks(session, document, chunk_blocks(parsed.blocks), now, index)
        record_outcome(
            session, document, now, outcome=INGESTED, parsed=parsed, counts=counts, digest=digest
        )
    session.flush()


def _result(session: Session, documents: list[Document]) -> JobResult:
    status = Counter(document.status for document in documents)
    outcomes = (
        {
            row.document_id: row
            for row in session.scalars(
                select(DocumentOutcome).where(
                    DocumentOutcome.document_id.in_([d.id for d in documents])
                )
            )
        }
        if documents
        else {}
    )
    if status[INGESTED] == 0:
        code = NO_DOCUMENTS if not documents else NO_EXTRACTABLE_TEXT
        # Each document's typed outcome stays recorded: the failure is about the run.
        raise JobFailure(
            code, _no_text_message(documents, outcomes), retryable=False, keep_results=True
        )
    ingested = [outcomes[d.id] for d in documents if d.status == INGESTED and d.id in outcomes]
    failed = [(d, outcomes.get(d.id)) for d in documents if d.status in (FAILED, DUPLICATE)]
    return JobResult(
        summary={
            "documents": len(documents),
            "ingested": status[INGESTED],
            "failed": status[FAILED],
            "duplicates": status[DUPLICATE],
            "chunks": sum(d.chunk_count for d in documents if d.status == INGESTED),
            "duplicate_chunks": sum(row.duplicate_chunks for row in ingested),
            "pages": sum(row.pages or 0 for row in ingested),
            "errors": dict(
                sorted(Counter(_code(row) for d, row in failed if d.status == FAILED).items())
            ),
            "warnings": [_warning(d, row) for d, row in failed[:MAX_WARNINGS]],
        }
    )


def _code(row: DocumentOutcome | None) -> str:
    return (row.error_code if row else None) or "unknown"


def _warning(document: Document, row: DocumentOutcome | None) -> dict[str, Any]:
    if document.status == DUPLICATE:
        return {
            "document": document.filename,
            "code": "duplicate_document",
            "duplicate_of": str(row.duplicate_of) if row else None,
        }
    return {"document": document.filename, "code": _code(row), "message": document.error}


def _no_text_message(documents: list[Document], outcomes: dict[Any, DocumentOutcome]) -> str:
    if not documents:
        return "the assessment has no documents: upload at least one"
    reasons = "; ".join(
        f"{d.filename}: [{_code(outcomes.get(d.id))}] {d.error}" for d in documents[:5] if d.error
    )
    return (
        f"no document yielded text ({reasons}); upload a document with text"
        if reasons
        else "no document yielded text; upload a document with text"
    )


def ingest_soa(context: JobContext, embedder: Embedder | None = None) -> JobResult:
    """Put the run's approved SoA into the KB as a Markdown document, chunked and embedded.

    The SoA is text this fleet wrote, so it is parsed in process, not in the sandbox."""
    request, session = context.request, context.session
    soa = latest_artifact(session, request.run_id, ArtifactKind.SOA, status="approved")
    if soa is None:
        raise JobFailure("soa_not_approved", "the run has no approved SoA to ingest")
    markdown = render_soa_markdown(soa.content, soa.version)
    data = markdown.encode()
    path, digest = put_bytes(context.storage_dir / "documents", data, ".md")
    # Unique on (assessment, sha256): the same approved SoA is one document, however
    # often it is ingested.
    document = session.scalar(
        select(Document).where(
            Document.assessment_id == request.assessment_id, Document.sha256 == digest
        )
    )
    if document is None:
        document = Document(
            tenant_id=request.tenant_id,
            assessment_id=request.assessment_id,
            filename=f"soa-v{soa.version}.md",
            media_type=MARKDOWN,
            size_bytes=len(data),
            sha256=digest,
            storage_path=str(path),
            status=UPLOADED,
            uploaded_by=SYSTEM_UPLOADER,
            created_at=utcnow(),
        )
        session.add(document)
        session.flush()
    parsed = parse(markdown, MARKDOWN)
    chunks = chunk_blocks(parsed.blocks)
    counts = write_chunks(
        session, document, chunks, utcnow(), ChunkIndex(session, request.assessment_id)
    )
    record_outcome(
        session,
        document,
        utcnow(),
        outcome=INGESTED,
        parsed=parsed,
        counts=counts,
        digest=text_sha256(parsed),
    )
    embedded = index_missing(session, request.assessment_id, embedder, document_id=document.id)
    return JobResult(
        summary={
            "document_id": str(document.id),
            "soa_version": soa.version,
            "chunks": len(chunks),
            "new_chunks": counts.new,
            "embedded": embedded.embedded,
        }
    )
