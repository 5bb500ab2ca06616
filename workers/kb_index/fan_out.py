"""index_kb fanned out: the chunks still without a vector, in batches of
LIFECYCLE_JOB_BATCH_ITEMS chunks that any kb_index worker may embed
(orchestrator.jobs.batches), or smaller ones when there are few chunks (`batches.spread`). The
job's own process takes batches too, so a lone worker still finishes; with more workers the
batches spread."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.db.session import read_transaction
from orchestrator.engine.routing import ROUTES
from orchestrator.jobs import batches
from orchestrator.knowledge.embedder import default_embedder
from orchestrator.knowledge.vectors import IndexCounts, embed_chunks, pending_chunks

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
    body = {"assessment_id": str(request.assessment_id), "job_id": request.job_id}
    offer = (EMBED_BATCH_TASK, ROUTES[JobKind.INDEX_KB].queue, body)
    size = batch_size or batches.spread(len(todo), get_settings().job_batch_items)
    work = embedding_work(request.assessment_id)
    batches.fan_out(request, todo, size, offer, work, deadline_of=kind)
    with read_transaction() as session:
        left = len(pending_chunks(session, request.assessment_id, embedder))
    return IndexCounts(embedded=len(todo) - left, already_indexed=0)


def embed_one_batch(body: dict[str, str]) -> str:
    """A kb_index worker's share: embed one batch if nobody holds it."""
    claimed = batches.claim(body["batch_id"])
    if claimed is None:
        return "taken"
    ok = batches.run_claimed(claimed, embedding_work(uuid.UUID(body["assessment_id"])))
    return "succeeded" if ok else "failed"
