"""Where each kind of job runs: its Celery task name and queue."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from orchestrator.contracts.jobs import JobKind

COORDINATE_TASK = "orchestrator.coordinate"
ORCHESTRATOR_QUEUE = "orchestrator"
NOTIFICATIONS_QUEUE = "notifications"  # webhook deliveries: orchestrator/notifications


@dataclass(frozen=True)
class Route:
    task_name: str
    queue: str


ROUTES: dict[JobKind, Route] = {
    JobKind.INGEST_DOCUMENTS: Route("ingestion.ingest_documents", "ingestion"),
    JobKind.INGEST_SOA: Route("ingestion.ingest_soa", "ingestion"),
    JobKind.INDEX_KB: Route("kb_index.index_kb", "kb_index"),
    JobKind.ANALYSIS: Route("analysis.run_step", "analysis"),
    JobKind.RENDER_REPORT: Route("reporting.render_report", "reporting"),
}

QUEUES: tuple[str, ...] = (ORCHESTRATOR_QUEUE, *sorted({r.queue for r in ROUTES.values()}))
QUEUES += (NOTIFICATIONS_QUEUE,)


def jobs_by_queue(jobs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Job ids (from (id, kind) pairs) grouped by the queue their messages go to."""
    grouped: dict[str, list[str]] = {}
    for job_id, kind in jobs:
        grouped.setdefault(ROUTES[JobKind(kind)].queue, []).append(job_id)
    return grouped
