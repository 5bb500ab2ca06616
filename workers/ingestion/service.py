"""Ingestion jobs: uploaded documents, and the approved SoA, into searchable chunks."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import select

from orchestrator.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import Document
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult
from orchestrator.storage import put_bytes
from workers.ingestion.chunking import chunk_blocks
from workers.ingestion.extract import UnusableDocument, extract
from workers.ingestion.parse import MARKDOWN, parse
from workers.ingestion.soa_markdown import render_soa_markdown
from workers.ingestion.store import FAILED, INGESTED, UPLOADED, mark_failed, write_chunks
from workers.inputs import latest_artifact
from workers.kb_index.embedder import Embedder
from workers.kb_index.store import index_missing
from workers.provenance import SYSTEM_UPLOADER


def ingest_documents(context: JobContext) -> JobResult:
    """Chunk every 'uploaded' document of the assessment.

    A document without usable text is marked 'failed' with the reason and the job goes
    on; only when no document at all has text does the job fail. Counts cover the whole
    assessment, so a re-delivered job reports what the first delivery reported.
    """
    session = context.session
    documents = list(session.scalars(
        select(Document).where(Document.assessment_id == context.request.assessment_id)
        .order_by(Document.created_at, Document.id)))
    now = utcnow()
    for document in documents:
        if document.status != UPLOADED:
            continue
        try:
            chunks = chunk_blocks(extract(document).blocks)
        except UnusableDocument as reason:
            mark_failed(document, str(reason))
            continue
        write_chunks(session, document, chunks, now)
    status = Counter(document.status for document in documents)
    if status[INGESTED] == 0:
        raise JobFailure("no_extractable_text", _no_text_message(documents), retryable=False)
    return JobResult(summary={
        "documents": len(documents), "ingested": status[INGESTED], "failed": status[FAILED],
        "chunks": sum(d.chunk_count for d in documents if d.status == INGESTED)})


def _no_text_message(documents: list[Document]) -> str:
    if not documents:
        return "the assessment has no documents"
    reasons = "; ".join(f"{d.filename}: {d.error}" for d in documents[:5] if d.error)
    return f"no document yielded text ({reasons})" if reasons else "no document yielded text"


def ingest_soa(context: JobContext, embedder: Embedder | None = None) -> JobResult:
    """Put the run's approved SoA into the KB as a Markdown document, chunked and embedded."""
    request, session = context.request, context.session
    soa = latest_artifact(session, request.run_id, ArtifactKind.SOA, status="approved")
    if soa is None:
        raise JobFailure("soa_not_approved", "the run has no approved SoA to ingest")
    markdown = render_soa_markdown(soa.content, soa.version)
    data = markdown.encode()
    path, digest = put_bytes(context.storage_dir / "documents", data, ".md")
    # Unique on (assessment, sha256): the same approved SoA is one document, however
    # often it is ingested.
    document = session.scalar(select(Document).where(
        Document.assessment_id == request.assessment_id, Document.sha256 == digest))
    if document is None:
        document = Document(
            tenant_id=request.tenant_id, assessment_id=request.assessment_id,
            filename=f"soa-v{soa.version}.md", media_type=MARKDOWN, size_bytes=len(data),
            sha256=digest, storage_path=str(path), status=UPLOADED,
            uploaded_by=SYSTEM_UPLOADER, created_at=utcnow())
        session.add(document)
        session.flush()
    chunks = chunk_blocks(parse(markdown, MARKDOWN).blocks)
    new_chunks = write_chunks(session, document, chunks, utcnow())
    counts = index_missing(session, request.assessment_id, embedder, document_id=document.id)
    return JobResult(summary={
        "document_id": str(document.id), "soa_version": soa.version,
        "chunks": len(chunks), "new_chunks": new_chunks, "embedded": counts.embedded})
