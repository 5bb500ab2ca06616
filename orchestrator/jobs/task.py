"""Thin Celery task bodies for jobs: decode, run the service, let Celery retry."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

from celery import Task
from pydantic import ValidationError
from sqlalchemy import select

from orchestrator.config.settings import get_settings
from orchestrator.contracts.jitter import full_jitter
from orchestrator.contracts.jobs import JOB_DECLARATIONS, JobKind, JobRequest
from orchestrator.db.session import transaction
from orchestrator.db.tables import JOBS
from orchestrator.engine.coordinator import coordinate
from orchestrator.engine.messages import kick, send_batch
from orchestrator.engine.routing import ROUTES
from orchestrator.jobs.batches import BATCH_TIME_LIMIT_S
from orchestrator.jobs.failed import JobAlreadyFailed, JobFailedForGood
from orchestrator.jobs.interface import JobFailure, JobService, Prepare
from orchestrator.jobs.not_run import not_run
from orchestrator.jobs.runtime import DATABASE_UNAVAILABLE, Delivery, JobRun, run_job
from orchestrator.jobs.tenant_share import admitted, gives_way, send_to_back
from orchestrator.observability.broker_view import SENT_AT_HEADER

log = logging.getLogger(__name__)

#: Options every job task shares (DESIGN: acks late, requeue if the worker is lost).
JOB_TASK_OPTIONS: dict[str, Any] = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
    # A job that failed for good (now or before) raises this once its failure is durable:
    # FAILURE in Flower, logged as an expected outcome.
    "throws": (JobFailedForGood,),
}


def job_task_options(kind: JobKind) -> dict[str, Any]:
    """`shared_task` options of the kind's job task: its declared name and time limits."""
    job = JOB_DECLARATIONS[kind]
    return {
        "name": job.task,
        "soft_time_limit": job.soft_time_limit_s,
        "time_limit": job.time_limit_s,
        **JOB_TASK_OPTIONS,
    }


def batch_task_options(name: str) -> dict[str, Any]:
    """`shared_task` options of a fanned-out job's batch task (orchestrator.jobs.batches):
    acked after its batch committed; a failed batch goes back to its job's list alone, and
    the job (or the next worker offered it) takes it again."""
    return {
        "name": name,
        "bind": True,
        "acks_late": True,
        "reject_on_worker_lost": True,
        "ignore_result": True,
        "soft_time_limit": BATCH_TIME_LIMIT_S - 60,
        "time_limit": BATCH_TIME_LIMIT_S,
    }


def run_batch_task(task: Task, body: dict[str, Any], take: Callable[[dict[str, Any]], str]) -> str:
    """A batch task's body: `take` the batch, unless its message gives way to another
    tenant's first job on its queue (tenant_share.gives_way): then it goes back to the end
    of the queue, and its job's own process may take the batch meanwhile."""
    tenant, queue = body.get("tenant_id"), body.get("queue")
    if isinstance(tenant, str) and isinstance(queue, str) and _gives_way(task, tenant, queue):
        send_batch(task.name, queue, str(body["batch_id"]), body)
        return "gave way"
    return take(body)


def _gives_way(task: Task, tenant_id: str, queue: str, job_id: str | None = None) -> bool:
    """A first delivery only: a retry keeps its place (its countdown is its own wait)."""
    if task.request.retries:
        return False
    return gives_way(tenant_id, queue, job_id, getattr(task.request, SENT_AT_HEADER, None))


ServiceWrapper = Callable[[JobService], JobService]
_wrappers: list[ServiceWrapper] = []
_replaced = False


def wrap_job_services(wrapper: ServiceWrapper, *, replaces_work: bool = False) -> None:
    """Wrap every job body of this process (tests and benchmarks inject instant or held
    jobs this way, through a module they have the worker import). A wrapper that
    `replaces_work` stands in for the real body: nothing is prepared for it."""
    global _replaced
    _wrappers.append(wrapper)
    _replaced = _replaced or replaces_work


def _wrapped(service: JobService) -> JobService:
    for wrapper in _wrappers:
        service = wrapper(service)
    return service


def run_job_task(
    task: Task, body: dict[str, Any], service: JobService, prepare: Prepare | None = None
) -> str:
    try:
        request = JobRequest.model_validate(body)
    except ValidationError as error:
        # Nothing to attribute it to; the sweep re-dispatches the real job from its row.
        log.error("dropping malformed job message: %s", error)
        return "malformed"
    if not admitted(request):
        send_to_back(request, body)  # then this message is acknowledged
        return "deferred"
    if _gives_way(task, request.tenant_id, ROUTES[request.kind].queue, request.job_id):
        send_to_back(request, body, pause=False)
        return "gave way"
    settings = get_settings()
    retries = task.request.retries
    delivery = Delivery(
        request,
        retries_left=retries < settings.job_max_retries,
        database_retries_left=retries < settings.job_database_retries,
    )
    try:
        # A body that stands in for the work (instant jobs) is not prepared for.
        delivered = run_job(delivery, _wrapped(service), None if _replaced else prepare)
    except JobFailure as failure:
        max_retries = (
            settings.job_database_retries
            if failure.code == DATABASE_UNAVAILABLE
            else settings.job_max_retries
        )
        backoff = full_jitter(
            settings.job_retry_backoff_s, retries, settings.job_retry_backoff_max_s
        )
        raise task.retry(exc=failure, countdown=backoff, max_retries=max_retries) from failure
    if delivered.applied is not None:
        delivered.applied.run()
    elif delivered.outcome is not JobRun.SKIPPED:
        continue_run(request.run_id)
    return _report(task, request, delivered.outcome)


def _report(task: Task, request: JobRequest, outcome: JobRun) -> str:
    """End the task in the Celery state that matches the job's row, so Flower shows the
    database's truth: SUCCESS only for a job that succeeded (now or before), FAILURE for
    one that failed (now or before), REVOKED for one that was not to run."""
    match outcome:
        case JobRun.FAILED:
            raise JobFailedForGood(request.job_id, _recorded_error(request.job_id))
        case JobRun.ALREADY_FAILED:
            raise JobAlreadyFailed(request.job_id, _recorded_error(request.job_id))
        case JobRun.SKIPPED:
            raise not_run(task, request.job_id)
    return outcome.value


def _recorded_error(job_id: str) -> dict[str, Any] | None:
    """The error the job row keeps, for the task's failure message (best effort)."""
    try:
        with transaction() as session:
            error = session.scalar(select(JOBS.c.error).where(JOBS.c.id == job_id))
    except Exception:  # the failure is recorded already; the message is a courtesy
        log.warning("could not read the error of job %s", job_id, exc_info=True)
        return None
    return dict(error) if isinstance(error, dict) else None


def continue_run(run_id: uuid.UUID) -> None:
    """Apply the job's outcome right here, with the coordinator's own function and lock,
    when its own transaction could not (the run was locked, or the job failed).

    It saves the hop through the orchestrator queue (a message and a task per job); the
    outcome is already durable in the inbox, so if this fails the kick, and failing that
    the inbox sweep, applies it.
    """
    if not get_settings().inline_coordination:
        kick(run_id)
        return
    try:
        coordinate(run_id)
    except Exception:
        log.warning(
            "applying the outcome of run %s here failed; waking the coordinator",
            run_id,
            exc_info=True,
        )
        kick(run_id)
