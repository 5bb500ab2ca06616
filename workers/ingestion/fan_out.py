"""ingest_documents fanned out: the documents still 'uploaded', in batches of
LIFECYCLE_JOB_BATCH_DOCUMENTS that any ingestion worker may check and parse
(orchestrator.jobs.batches). Each batch keeps its documents' outcomes in storage
(`kept_outcomes`); the job's process, which takes batches too, reads them all back, and its
transaction then stores the chunks as before, so a duplicate text or a failed document is
decided once, in one place."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.db.models import Document
from orchestrator.db.session import read_transaction
from orchestrator.engine.routing import ROUTES
from orchestrator.jobs import batches
from workers.ingestion.ahead import DocumentsAhead, Parsed, parse_documents, uploaded
from workers.ingestion.kept_outcomes import keep, kept
from workers.ingestion.sandbox import ParserSandbox, shared_sandbox
from workers.ingestion.store import UPLOADED

PARSE_BATCH_TASK = "ingestion.parse_batch"


def parsing_work(sandbox: ParserSandbox | None = None) -> batches.Work:
    def work(document_ids: list[str]) -> Callable[[Session], None]:
        with read_transaction() as session:
            documents = list(
                session.scalars(
                    select(Document).where(Document.id.in_([uuid.UUID(i) for i in document_ids]))
                )
            )
        parser = sandbox or shared_sandbox()
        storage = get_settings().resolved_storage_dir
        outcomes = parse_documents(documents, parser).by_id
        for document in documents:
            keep(storage, document, parser.limits, outcomes[document.id])
        return lambda session: None  # the outcomes are in storage; the mark is the batch's

    return work


def prepare_documents(request: JobRequest, sandbox: ParserSandbox | None = None) -> DocumentsAhead:
    """ingest_documents' `Prepare`: every document still 'uploaded', parsed ahead, in
    batches offered to the ingestion queue; what no batch kept is parsed here."""
    with read_transaction() as session:
        documents = [d for d in uploaded(session, request.assessment_id) if d.status == UPLOADED]
    parser = sandbox or shared_sandbox()
    if not documents:
        return DocumentsAhead({})
    settings = get_settings()
    ids = [str(document.id) for document in documents]
    offer = (PARSE_BATCH_TASK, ROUTES[JobKind.INGEST_DOCUMENTS].queue, {"job_id": request.job_id})
    batches.fan_out(request, ids, settings.job_batch_documents, offer, parsing_work(parser))
    storage = settings.resolved_storage_dir
    found: dict[uuid.UUID, Parsed] = {}
    for document in documents:
        outcome = kept(storage, document, parser.limits)
        if outcome is not None:
            found[document.id] = outcome
    missing = [document for document in documents if document.id not in found]
    found.update(parse_documents(missing, parser).by_id if missing else {})
    return DocumentsAhead(found)


def parse_one_batch(body: dict[str, str]) -> str:
    """An ingestion worker's share: parse one batch if nobody holds it."""
    claimed = batches.claim(body["batch_id"])
    if claimed is None:
        return "taken"
    ok = batches.run_claimed(claimed, parsing_work())
    return "succeeded" if ok else "failed"
