"""A delivery that finds its job cancelled or superseded ends its task as REVOKED.

A cancel (of the run, or of downstream work by a reprocess) marks the job row cancelled
and broadcasts a revoke: a worker that hears it drops the message and Flower shows
REVOKED. A worker that never heard it (started later, or the broadcast was lost) runs the
message, finds the row cancelled and does nothing. Returning would show that as SUCCESS
and raising an error as FAILURE, so the task announces `task-revoked` itself, with this
module's exception as the reason Flower displays, and raises it: it is an `Ignore`, which
acks the message and sends no further event. Metrics count it as `skipped`.
"""

from __future__ import annotations

import logging

from celery import Task
from celery.exceptions import Ignore
from sqlalchemy import select

from orchestrator.contracts.errors import FleetError
from orchestrator.contracts.jobs import JobStatus
from orchestrator.db.session import transaction
from orchestrator.db.tables import JOBS, RUNS

log = logging.getLogger(__name__)


class JobNotRun(FleetError, Ignore):  # type: ignore[misc]
    """Ends the task of a delivery whose job is not to run (cancelled, superseded,
    unknown, or its run is over)."""

    outcome = "skipped"
    """The job outcome metrics count it under (instead of the task state `ignored`)."""


def why_not_run(job_id: str) -> str:
    """What the database says about a job a delivery did not run (best effort)."""
    try:
        with transaction() as session:
            row = session.execute(
                select(JOBS.c.status, RUNS.c.status.label("run_status"), RUNS.c.reason)
                .select_from(JOBS.join(RUNS, JOBS.c.run_id == RUNS.c.id))
                .where(JOBS.c.id == job_id)
            ).first()
    except Exception:  # nothing was done either way; the message is a courtesy
        log.warning("could not read why job %s was not run", job_id, exc_info=True)
        return f"job {job_id} was not run"
    if row is None:
        return f"job {job_id} was not run: it is unknown to the database"
    if row.run_status == "cancelled":
        because = f": {row.reason}" if row.reason else ""
        return f"job {job_id} was not run: cancelled with its run{because}"
    if row.status == JobStatus.CANCELLED.value:
        return f"job {job_id} was not run: superseded (its run was rewound to reprocess a step)"
    return f"job {job_id} was not run: its run is {row.run_status}"


def not_run(task: Task, job_id: str) -> JobNotRun:
    """Announce the task as revoked and return the exception that ends it."""
    ending = JobNotRun(why_not_run(job_id))
    if task.send_events and task.app.conf.worker_send_task_events and task.request.hostname:
        try:
            task.send_event(
                "task-revoked",
                terminated=False,
                signum=None,
                expired=False,
                exception=repr(ending),
            )
        except Exception:  # the job's fate is durable; only the monitor misses it
            log.warning("could not announce job %s as revoked", job_id, exc_info=True)
    return ending
