"""ingest_soa's `Prepare` and the approved SoA's document in the knowledge base.

The document's row, chunks and outcome are written the same way by the `Prepare`, in a
transaction of its own, so that its chunks can be embedded in batches any kb_index worker
may take (`workers.kb_index.fan_out`), and by the job's transaction, which then finds them
there. Unique on (assessment, sha256) and on each chunk's id: writing it again adds
nothing."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.db.models import Document
from orchestrator.db.session import read_transaction, transaction
from orchestrator.knowledge.embedder import default_embedder
from orchestrator.knowledge.provenance import SYSTEM_UPLOADER
from workers.ingestion.ahead import SoaAhead, approved_soa, soa_ahead
from workers.ingestion.parse import MARKDOWN
from workers.ingestion.store import (
    INGESTED,
    UPLOADED,
    ChunkIndex,
    WriteCounts,
    record_outcome,
    text_sha256,
    write_chunks,
)
from workers.kb_index.fan_out import embed_in_batches


def write_soa_document(
    session: Session, request: JobRequest, ahead: SoaAhead
) -> tuple[Document, WriteCounts]:
    document = session.scalar(
        select(Document).where(
            Document.assessment_id == request.assessment_id, Document.sha256 == ahead.sha256
        )
    )
    if document is None:
        document = Document(
            tenant_id=request.tenant_id,
            assessment_id=request.assessment_id,
            filename=f"soa-v{ahead.soa_version}.md",
            media_type=MARKDOWN,
            size_bytes=ahead.size_bytes,
            sha256=ahead.sha256,
            storage_path=str(ahead.path),
            status=UPLOADED,
            uploaded_by=SYSTEM_UPLOADER,
            created_at=utcnow(),
        )
        session.add(document)
        session.flush()
    counts = write_chunks(
        session, document, ahead.chunks, utcnow(), ChunkIndex(session, request.assessment_id)
    )
    record_outcome(
        session,
        document,
        utcnow(),
        outcome=INGESTED,
        parsed=ahead.parsed,
        counts=counts,
        digest=text_sha256(ahead.parsed),
    )
    return document, counts


def prepare_soa(request: JobRequest) -> SoaAhead:
    """ingest_soa's `Prepare`: the SoA rendered, chunked and written, then its chunks
    embedded in batches; the job's transaction finds both done."""
    with read_transaction() as session:
        soa = approved_soa(session, request.run_id)
    storage, embedder = get_settings().resolved_storage_dir, default_embedder()
    ahead = soa_ahead(storage, soa, request.assessment_id, embedder, embed=False)
    written = _written_once(request, ahead)
    embedded = embed_in_batches(request, kind=JobKind.INGEST_SOA).embedded
    return replace(ahead, embedded=embedded, new_chunks=written.new)


def _written_once(request: JobRequest, ahead: SoaAhead, attempts: int = 3) -> WriteCounts:
    """Write the document outside the job's lock: a redelivered copy of this job may
    prepare at the same time, and the loser of that race finds the winner's rows when it
    writes again."""
    for _ in range(attempts - 1):
        try:
            with transaction() as session:
                return write_soa_document(session, request, ahead)[1]
        except IntegrityError:
            continue
    with transaction() as session:
        return write_soa_document(session, request, ahead)[1]
