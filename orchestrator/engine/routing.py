"""Where each kind of job runs: its Celery task name and queue."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from orchestrator.contracts.jobs import JOBS, JobKind

COORDINATE_TASK = "orchestrator.coordinate"
ORCHESTRATOR_QUEUE = "orchestrator"
NOTIFICATIONS_QUEUE = "notifications"  # webhook deliveries: orchestrator/notifications


@dataclass(frozen=True)
class Route:
    task_name: str
    queue: str


#: Declared with each job kind (orchestrator.contracts.jobs.JOBS).
ROUTES: dict[JobKind, Route] = {job.kind: Route(job.task, job.queue) for job in JOBS}

QUEUES: tuple[str, ...] = (ORCHESTRATOR_QUEUE, *sorted({r.queue for r in ROUTES.values()}))
QUEUES += (NOTIFICATIONS_QUEUE,)


def jobs_by_queue(jobs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Job ids (from (id, kind) pairs) grouped by the queue their messages go to."""
    grouped: dict[str, list[str]] = {}
    for job_id, kind in jobs:
        grouped.setdefault(ROUTES[JobKind(kind)].queue, []).append(job_id)
    return grouped
