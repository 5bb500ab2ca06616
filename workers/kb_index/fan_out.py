"""index_kb fanned out: the chunks still without a vector, in batches of
LIFECYCLE_JOB_BATCH_ITEMS chunks that any kb_index worker may embed
(orchestrator.jobs.batches). The job's own process takes batches too, so a lone worker
still finishes; with more workers the batches spread."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.db.session import read_transaction
from orchestrator.engine.messages import send_batch
from orchestrator.engine.routing import ROUTES
from orchestrator.jobs import batches
from orchestrator.knowledge.embedder import default_embedder
from orchestrator.knowledge.vectors import IndexCounts, embed_chunks, pending_chunks

log = logging.getLogger(__name__)
EMBED_BATCH_TASK = "kb_index.embed_batch"


def embedding_work(assessment_id: uuid.UUID) -> batches.Work:
    embedder = default_embedder()

    def work(chunk_ids: list[str]) -> Callable[[Session], None]:
        return embed_chunks(assessment_id, embedder, chunk_ids)

    return work


def embed_in_batches(
    request: JobRequest, batch_size: int | None = None, kind: JobKind = JobKind.INDEX_KB
) -> IndexCounts:
    """The index_kb job's `Prepare` (and ingest_soa's, for the SoA's chunks): plan the
    batches, offer them to the kb_index queue, take them until none is left, and wait for
    the rest within the job's deadline (`kind`'s)."""
    embedder = default_embedder()
    with read_transaction() as session:
        todo = pending_chunks(session, request.assessment_id, embedder)
    settings = get_settings()
    size = batch_size or settings.job_batch_items
    planned = batches.plan(
        request.job_id, request.run_id, request.tenant_id, request.step.value, todo, size
    )
    if not settings.is_embedded_broker:  # one process anyway: it does every batch itself
        body = {"assessment_id": str(request.assessment_id), "job_id": request.job_id}
        queue = ROUTES[JobKind.INDEX_KB].queue
        for batch_id in planned[1:]:  # the first is this process's own
            try:
                send_batch(EMBED_BATCH_TASK, queue, batch_id, {**body, "batch_id": batch_id})
            except Exception:  # this process takes what nobody else was offered
                log.warning("could not offer batch %s to the queue", batch_id, exc_info=True)
    deadline = settings.sweeps.job_deadline(kind).total_seconds()
    done = batches.drive(request.job_id, embedding_work(request.assessment_id), deadline)
    with read_transaction() as session:
        left = len(pending_chunks(session, request.assessment_id, embedder))
    log.info("%s %s: %d/%d batches done", kind.value, request.job_id, done.done, done.total)
    return IndexCounts(embedded=len(todo) - left, already_indexed=0)


def embed_one_batch(body: dict[str, str]) -> str:
    """A kb_index worker's share: embed one batch if nobody holds it."""
    claimed = batches.claim(body["batch_id"])
    if claimed is None:
        return "taken"
    ok = batches.run_claimed(claimed, embedding_work(uuid.UUID(body["assessment_id"])))
    return "succeeded" if ok else "failed"
