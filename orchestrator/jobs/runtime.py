"""Runs a job at-least-once with exactly-once effects.

1. Claim: lock the job row; a finished or cancelled job is not run again.
2. Work: the service writes its results in the same transaction that marks the job
   succeeded and puts its completion signal in the run's inbox.
3. Wake the coordinator. If this process dies anywhere, a re-delivery repeats only
   what did not commit.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from enum import StrEnum

from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy import select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from orchestrator.clock import utcnow
from orchestrator.contracts.jobs import JobError, JobOutcome, JobRequest, JobStatus
from orchestrator.contracts.signals import SignalEnvelope, SignalType
from orchestrator.db.models import Job, OutboxMessage, WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.inbox import insert_signal
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult, JobService
from orchestrator.lifecycle.definition import STEP_SPECS
from orchestrator.settings import get_settings

log = logging.getLogger(__name__)


class JobRun(StrEnum):
    """What one delivery of a job did."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ALREADY_FINISHED = "already_finished"
    SKIPPED = "skipped"
    """Cancelled, unknown, or the run is over: nothing to do."""


@dataclass(frozen=True)
class Delivery:
    request: JobRequest
    retries_left: bool
    """False on the last delivery Celery will make: a retryable error then fails the step."""


def run_job(delivery: Delivery, service: JobService) -> JobRun:
    request = delivery.request
    claim = _claim(request)
    if claim is not JobRun.SUCCEEDED:
        return claim
    _hold_if_asked(request)
    try:
        with transaction() as session:
            if not _still_ours(session, request):
                return JobRun.SKIPPED
            context = JobContext(request=request, session=session,
                                 storage_dir=get_settings().resolved_storage_dir)
            result = service(context)
            _finish(session, request, result)
    except JobFailure as failure:
        if failure.retryable and delivery.retries_left:
            raise
        _record_failure(request, JobError(code=failure.code, message=failure.message,
                                          retryable=failure.retryable))
        return JobRun.FAILED
    except OperationalError as error:  # the database went away: worth another try
        if delivery.retries_left:
            raise JobFailure("database_unavailable", str(error.orig), retryable=True) from error
        _record_failure(request, JobError(code="database_unavailable",
                                          message="database unavailable", retryable=True))
        return JobRun.FAILED
    except SoftTimeLimitExceeded:
        _record_failure(request, JobError(code="time_limit_exceeded",
                                          message="the job ran past its time limit"))
        return JobRun.FAILED
    except Exception as error:  # a bug, not a retryable condition: fail the step loudly
        log.exception("job %s crashed", request.job_id)
        _record_failure(request, JobError(code="internal_error",
                                          message=f"{type(error).__name__}: {error}"))
        return JobRun.FAILED
    return JobRun.SUCCEEDED


def _claim(request: JobRequest) -> JobRun:
    with transaction() as session:
        job = session.scalar(select(Job).where(Job.id == request.job_id).with_for_update())
        if job is None:
            log.error("job %s is unknown; dropping the message", request.job_id)
            return JobRun.SKIPPED
        if job.status in (JobStatus.SUCCEEDED.value, JobStatus.FAILED.value):
            return JobRun.ALREADY_FINISHED
        if job.status == JobStatus.CANCELLED.value:
            return JobRun.SKIPPED
        now = utcnow()
        job.status, job.updated_at = JobStatus.STARTED.value, now
        job.deliveries += 1
        job.started_at = job.started_at or now
        # The message arrived, so it was published: the outbox sweep must not resend it.
        session.execute(update(OutboxMessage).where(
            OutboxMessage.task_id == request.job_id, OutboxMessage.published_at.is_(None))
            .values(published_at=now))
    return JobRun.SUCCEEDED


def _still_ours(session: Session, request: JobRequest) -> bool:
    """Re-check under lock: a duplicate delivery or a cancel may have finished it."""
    job = session.scalar(select(Job).where(Job.id == request.job_id).with_for_update())
    if job is None or job.status != JobStatus.STARTED.value:
        return False
    status = session.scalar(select(WorkflowRun.status).where(WorkflowRun.id == request.run_id))
    return status not in ("cancelled", "completed")


def _finish(session: Session, request: JobRequest, result: JobResult) -> None:
    outcome = _outcome(request, succeeded=True, summary=result.summary)
    if result.artifact is not None:
        outcome = outcome.model_copy(update={"artifact": result.artifact})
    signal_type = STEP_SPECS[request.step].completion_signal or SignalType.JOB_COMPLETED
    _set_status(session, request, JobStatus.SUCCEEDED, summary=result.summary)
    insert_signal(session, _outcome_signal(request, signal_type, outcome))


def _record_failure(request: JobRequest, error: JobError) -> None:
    with transaction() as session:
        job = session.scalar(select(Job).where(Job.id == request.job_id).with_for_update())
        if job is None or job.status != JobStatus.STARTED.value:
            return
        fail_job(session, request, error)


def fail_job(session: Session, request: JobRequest, error: JobError) -> None:
    """Mark the job failed and post its job_failed outcome, in the caller's transaction."""
    _set_status(session, request, JobStatus.FAILED, error=error.model_dump())
    outcome = _outcome(request, succeeded=False).model_copy(update={"error": error})
    insert_signal(session, _outcome_signal(request, SignalType.JOB_FAILED, outcome))


def _set_status(session: Session, request: JobRequest, status: JobStatus, *,
                summary: dict[str, object] | None = None,
                error: dict[str, object] | None = None) -> None:
    job = session.get(Job, request.job_id)
    assert job is not None
    now = utcnow()
    job.status, job.summary, job.error = status.value, summary, error
    job.finished_at = job.updated_at = now


def _outcome(request: JobRequest, *, succeeded: bool,
             summary: dict[str, object] | None = None) -> JobOutcome:
    return JobOutcome(
        job_id=request.job_id, run_id=request.run_id, step=request.step,
        attempt=request.attempt, idempotency_key=request.idempotency_key,
        trace_id=request.trace_id, tenant_id=request.tenant_id,
        organization_id=request.organization_id, assessment_id=request.assessment_id,
        actor_id=request.actor_id, succeeded=succeeded, summary=dict(summary or {}))


def _outcome_signal(request: JobRequest, signal_type: SignalType,
                    outcome: JobOutcome) -> SignalEnvelope:
    return SignalEnvelope(
        type=signal_type, run_id=request.run_id, tenant_id=request.tenant_id,
        organization_id=request.organization_id, assessment_id=request.assessment_id,
        trace_id=request.trace_id, actor_id=f"job:{request.kind.value}",
        # One outcome per job: a re-delivery's signal is a duplicate, never a second one.
        idempotency_key=f"outcome:{request.job_id}", step=request.step,
        payload=outcome.model_dump(mode="json"), received_at=utcnow())


def _hold_if_asked(request: JobRequest) -> None:
    """Fault injection for crash tests: park the job mid-flight until the process dies."""
    if get_settings().hold_job_step == request.step.value:
        log.warning("holding job %s for fault injection", request.job_id)
        threading.Event().wait()
