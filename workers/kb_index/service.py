"""index_kb: give every chunk of the assessment a vector, embedding only new chunks."""

from __future__ import annotations

from orchestrator.jobs.interface import JobContext, JobResult
from orchestrator.knowledge.embedder import Embedder, default_embedder
from orchestrator.knowledge.vectors import BATCH_SIZE, index_missing


def index_kb(context: JobContext, embedder: Embedder | None = None) -> JobResult:
    embedder = embedder or default_embedder()
    counts = index_missing(
        context.session, context.request.assessment_id, embedder, batch_size=BATCH_SIZE
    )
    return JobResult(
        summary={
            "embedded": counts.embedded,
            "already_indexed": counts.already_indexed,
            "model": embedder.name,
            "dimensions": embedder.dimensions,
        }
    )
