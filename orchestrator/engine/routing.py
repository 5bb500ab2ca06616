"""Where each kind of job runs: its Celery task name and queue."""

from __future__ import annotations

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
