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
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.db.compute_guard import write_transaction_holder
from orchestrator.db.ingestion_models import DocumentOutcome
from orchestrator.db.models import Document
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult, PrepareAgain
from orchestrator.knowledge.embedder import Embedder, default_embedder
from orchestrator.knowledge.vectors import index_missing, pending_chunks, store_vectors
from workers.ingestion.ahead import (
    DocumentsAhead,
    SoaAhead,
    approved_soa,
    parse_documents,
    soa_ahead,
    uploaded,
)
from workers.ingestion.chunking import Chunk, chunk_blocks
from workers.ingestion.fan_out import prepare_documents
from workers.ingestion.parse import ParsedDocument
from workers.ingestion.sandbox import ParserSandbox, shared_sandbox
from workers.ingestion.soa_document import prepare_soa, write_soa_document
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

NO_DOCUMENTS = "no_documents"
NO_EXTRACTABLE_TEXT = "no_extractable_text"
MAX_WARNINGS = 20


def ingest_documents(context: JobContext, sandbox: ParserSandbox | None = None) -> JobResult:
    """Store the chunks of every 'uploaded' document of the assessment, parsed ahead by
    `prepare_documents` (or here, when a caller runs the service outside the job runtime).

    Counts cover the whole assessment, so a re-delivered job reports what the first
    delivery reported.
    """
    session = context.session
    documents = uploaded(session, context.request.assessment_id)
    todo = [document for document in documents if document.status == UPLOADED]
    ahead = context.prepared if isinstance(context.prepared, DocumentsAhead) else None
    if ahead is None or not ahead.covers(todo):
        if write_transaction_holder() is not None:
            raise PrepareAgain(prepare_documents, "documents were uploaded after parsing")
        ahead = parse_documents(todo, sandbox or shared_sandbox())
    index = ChunkIndex(session, context.request.assessment_id)
    for document in todo:
        parsed = ahead.by_id[document.id]
        if parsed.document is None:
            assert parsed.error is not None
            mark_failed(session, document, parsed.error, utcnow())
        else:
            store_parsed(session, document, parsed.document, index, parsed.chunks)
    session.flush()
    return _result(session, documents)


def store_parsed(
    session: Session,
    document: Document,
    parsed: ParsedDocument,
    index: ChunkIndex,
    chunks: list[Chunk] | None = None,
) -> None:
    now = utcnow()
    digest = text_sha256(parsed)
    original = find_same_text(session, document, digest)
    if original is not None:
        mark_duplicate(session, document, parsed, digest, original, now)
    else:
        if chunks is None:
            chunks = chunk_blocks(parsed.blocks)
        counts = write_chunks(session, document, chunks, now, index)
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
    """Put the run's approved SoA into the KB as a Markdown document. `prepare_soa` wrote
    it and embedded its chunks in batches; here it is found (or, for a caller outside the
    job runtime, written and embedded in this transaction).

    The SoA is text this fleet wrote, so it is parsed in process, not in the sandbox."""
    request, session = context.request, context.session
    embedder = embedder or default_embedder()
    soa = approved_soa(session, request.run_id)
    ahead = context.prepared if isinstance(context.prepared, SoaAhead) else None
    if ahead is None or ahead.soa_id != soa.id or ahead.embedder != embedder.name:
        if write_transaction_holder() is not None:
            raise PrepareAgain(prepare_soa, "the approved SoA changed since it was prepared")
        ahead = soa_ahead(context.storage_dir, soa, request.assessment_id, embedder)
    document, counts = write_soa_document(session, request, ahead)
    embedded = ahead.embedded + store_vectors(
        session, request.assessment_id, embedder, ahead.vectors
    )
    if pending_chunks(session, request.assessment_id, embedder, document.id):
        # Only a chunk the preparation did not see (it cannot, for the same SoA) is left.
        if write_transaction_holder() is not None:
            raise PrepareAgain(prepare_soa, "SoA chunks without a vector are left")
        embedded += index_missing(
            session, request.assessment_id, embedder, document_id=document.id
        ).embedded
    return JobResult(
        summary={
            "document_id": str(document.id),
            "soa_version": soa.version,
            "chunks": len(ahead.chunks),
            "new_chunks": ahead.new_chunks + counts.new,
            "embedded": embedded,
        }
    )
