"""Thin Celery task bodies for jobs: decode, run the service, let Celery retry."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

from celery import Task
from pydantic import ValidationError

from orchestrator.config.settings import get_settings
from orchestrator.contracts.jobs import JobRequest
from orchestrator.engine.coordinator import coordinate
from orchestrator.engine.messages import kick
from orchestrator.jobs.interface import JobFailure, JobService
from orchestrator.jobs.runtime import Delivery, JobRun, run_job

log = logging.getLogger(__name__)

#: Options every job task shares (DESIGN: acks late, requeue if the worker is lost).
JOB_TASK_OPTIONS: dict[str, Any] = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
}

ServiceWrapper = Callable[[JobService], JobService]
_wrappers: list[ServiceWrapper] = []


def wrap_job_services(wrapper: ServiceWrapper) -> None:
    """Wrap every job body of this process (tests and benchmarks inject instant or held
    jobs this way, through a module they have the worker import)."""
    _wrappers.append(wrapper)


def _wrapped(service: JobService) -> JobService:
    for wrapper in _wrappers:
        service = wrapper(service)
    return service


def run_job_task(task: Task, body: dict[str, Any], service: JobService) -> str:
    try:
        request = JobRequest.model_validate(body)
    except ValidationError as error:
        # Nothing to attribute it to; the sweep re-dispatches the real job from its row.
        log.error("dropping malformed job message: %s", error)
        return "malformed"
    max_retries = get_settings().job_max_retries
    delivery = Delivery(request, retries_left=task.request.retries < max_retries)
    try:
        delivered = run_job(delivery, _wrapped(service))
    except JobFailure as failure:
        backoff = get_settings().job_retry_backoff_s * (2 ** task.request.retries)
        raise task.retry(exc=failure, countdown=backoff, max_retries=max_retries) from failure
    if delivered.applied is not None:
        delivered.applied.run()
    elif delivered.outcome in (JobRun.SUCCEEDED, JobRun.FAILED, JobRun.ALREADY_FINISHED):
        continue_run(request.run_id)
    return delivered.outcome.value


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
        log.warning("applying the outcome of run %s here failed; waking the coordinator",
                    run_id, exc_info=True)
        kick(run_id)
