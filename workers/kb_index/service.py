"""index_kb: give every chunk of the assessment a vector, embedding only new chunks."""

from __future__ import annotations

from orchestrator.contracts.jobs import JobRequest
from orchestrator.db.compute_guard import write_transaction_holder
from orchestrator.jobs.interface import JobContext, JobResult, PrepareAgain
from orchestrator.knowledge.embedder import Embedder, default_embedder
from orchestrator.knowledge.vectors import (
    BATCH_SIZE,
    IndexCounts,
    index_missing,
    pending_chunks,
)
from workers.kb_index.fan_out import embed_in_batches


def embed_before(request: JobRequest) -> IndexCounts:
    """The job's `Prepare`: embedding takes minutes on a large KB, so it runs batch by
    batch in short transactions, fanned out to every kb_index worker (fan_out.py); the
    job's own transaction only finds what is left."""
    return embed_in_batches(request)


def index_kb(context: JobContext, embedder: Embedder | None = None) -> JobResult:
    embedder = embedder or default_embedder()
    if write_transaction_holder() is not None and pending_chunks(
        context.session, context.request.assessment_id, embedder
    ):
        # Chunks arrived after the embedding ahead (or it did not run): embed them ahead too.
        raise PrepareAgain(embed_before, "chunks without a vector are left")
    counts = index_missing(
        context.session, context.request.assessment_id, embedder, batch_size=BATCH_SIZE
    )
    ahead = context.prepared if isinstance(context.prepared, IndexCounts) else None
    embedded = counts.embedded + (ahead.embedded if ahead else 0)
    return JobResult(
        summary={
            "embedded": embedded,
            "already_indexed": counts.already_indexed - (ahead.embedded if ahead else 0),
            "model": embedder.name,
            "dimensions": embedder.dimensions,
        }
    )
