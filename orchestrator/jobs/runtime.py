"""Runs a job at-least-once with exactly-once effects.

1. Claim: mark the job row started; a finished or cancelled job is not run again.
2. Work: the service writes its results in the same transaction that marks the job
   succeeded and puts its completion signal in the run's inbox; when no other
   transaction holds the run, that transaction also applies the signal (the
   coordinator's own function, under a savepoint), so a job costs two transactions.
3. Otherwise wake the coordinator. If this process dies anywhere, a re-delivery repeats
   only what did not commit.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy import bindparam, exists, func, select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.jobs import JobError, JobOutcome, JobRequest, JobStatus
from orchestrator.contracts.signals import SignalEnvelope, SignalType
from orchestrator.db.compute_guard import job_scope, write_transaction_open
from orchestrator.db.session import get_engine, transaction
from orchestrator.db.tables import JOBS, OUTBOX, RUNS
from orchestrator.engine.coordinator import AfterCommit, apply_if_free
from orchestrator.engine.inbox import insert_signal
from orchestrator.jobs.dead_letter_resolution import resolve_by_success
from orchestrator.jobs.heartbeat import lease
from orchestrator.jobs.interface import (
    JobContext,
    JobFailure,
    JobResult,
    JobService,
    Prepare,
    PrepareAgain,
)
from orchestrator.lifecycle.definition import STEP_SPECS

log = logging.getLogger(__name__)

_RUNNABLE = (JobStatus.QUEUED.value, JobStatus.STARTED.value)

_CLAIM = (
    update(JOBS)
    .where(JOBS.c.id == bindparam("job_id"), JOBS.c.status.in_(_RUNNABLE))
    .values(
        status=JobStatus.STARTED.value,
        deliveries=JOBS.c.deliveries + 1,
        started_at=func.coalesce(JOBS.c.started_at, bindparam("now", type_=JOBS.c.started_at.type)),
        updated_at=bindparam("now", type_=JOBS.c.updated_at.type),
    )
    .returning(JOBS.c.id)
)
_STATUS = select(JOBS.c.status).where(JOBS.c.id == bindparam("job_id"))
_MARK_PUBLISHED = (
    update(OUTBOX)
    .where(OUTBOX.c.task_id == bindparam("job_id"), OUTBOX.c.published_at.is_(None))
    .values(published_at=bindparam("now", type_=OUTBOX.c.published_at.type))
)
_CLAIMED = _CLAIM.cte("claimed")
#: PostgreSQL: the claim, the outbox mark and the job's prior status in one statement,
#: run in autocommit (one round trip, still one transaction with its WAL flush).
_CLAIM_AT_ONCE = (
    select(JOBS.c.status, exists(select(_CLAIMED.c.id)).label("claimed"))
    .where(JOBS.c.id == bindparam("job_id"))
    .add_cte(
        update(OUTBOX)
        .where(OUTBOX.c.task_id.in_(select(_CLAIMED.c.id)), OUTBOX.c.published_at.is_(None))
        .values(published_at=bindparam("now", type_=OUTBOX.c.published_at.type))
        .cte("marked")
    )
)
_OURS = (
    select(JOBS.c.status, RUNS.c.status.label("run_status"))
    .select_from(JOBS.join(RUNS, JOBS.c.run_id == RUNS.c.id))
    .where(JOBS.c.id == bindparam("job_id"))
    .with_for_update(of=JOBS)
)
_FINISHED = (
    update(JOBS)
    .where(JOBS.c.id == bindparam("job_id"))
    .values(
        status=bindparam("new_status"),
        summary=bindparam("new_summary", type_=JOBS.c.summary.type),
        error=bindparam("new_error", type_=JOBS.c.error.type),
        finished_at=bindparam("now", type_=JOBS.c.finished_at.type),
        updated_at=bindparam("now", type_=JOBS.c.updated_at.type),
    )
)


class JobRun(StrEnum):
    """What one delivery of a job did."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ALREADY_FINISHED = "already_finished"
    """The job had succeeded already (a duplicate delivery): nothing to do."""
    ALREADY_FAILED = "already_failed"
    """The job had failed already (dead-lettered, or failed by an earlier delivery)."""
    SKIPPED = "skipped"
    """Cancelled (with its run, or superseded by reprocessing), unknown, or the run is
    over: nothing to do."""


@dataclass(frozen=True)
class Delivered:
    outcome: JobRun
    applied: AfterCommit | None = None
    """Set when the job's transaction also applied its outcome: what is left to do after
    the commit (publish the next job). None: the coordinator still has to apply it."""


@dataclass(frozen=True)
class Delivery:
    request: JobRequest
    retries_left: bool
    """False on the last delivery Celery will make: a retryable error then fails the step."""
    database_retries_left: bool = True
    """The same for a database error: an outage is waited out longer than a job's error."""


#: The code of a retry caused by the database, not the job: it gets the outage's budget.
DATABASE_UNAVAILABLE = "database_unavailable"
#: Inputs that keep changing between a job's Prepare and its transaction: retried later.
INPUTS_CHANGING = "inputs_changing"
#: How often one delivery prepares again before it lets Celery retry it with backoff.
MAX_PREPARES = 3


def run_job(delivery: Delivery, service: JobService, prepare: Prepare | None = None) -> Delivered:
    request = delivery.request
    with job_scope(f"{request.kind.value}:{request.job_id}"):
        return _deliver(delivery, service, prepare)


def _deliver(delivery: Delivery, service: JobService, prepare: Prepare | None) -> Delivered:
    request = delivery.request
    try:
        # The claim is a database call like any other: a lost connection here is retried.
        claim = _claim(request)
        if claim is not JobRun.SUCCEEDED:
            return Delivered(claim)
        # Renewed by this process until the job's transaction ends: a worker that dies,
        # freezes or is cut off lets it lapse, and the lost-job sweep re-dispatches.
        deadline = get_settings().sweeps.job_deadline(request.kind).total_seconds()
        with lease(request.job_id, renew_for_s=deadline):
            return _prepare_and_work(delivery, service, prepare)
    except JobFailure as failure:
        if failure.retryable and delivery.retries_left:
            raise
        _record_failure(request, _error_of(failure))
        return Delivered(JobRun.FAILED)
    except OperationalError as error:  # the database went away: worth another try
        if delivery.database_retries_left:
            raise JobFailure(DATABASE_UNAVAILABLE, str(error.orig), retryable=True) from error
        _record_failure(
            request,
            JobError(code=DATABASE_UNAVAILABLE, message="database unavailable", retryable=True),
        )
        return Delivered(JobRun.FAILED)
    except SoftTimeLimitExceeded:
        _record_failure(
            request, JobError(code="time_limit_exceeded", message="the job ran past its time limit")
        )
        return Delivered(JobRun.FAILED)
    except Exception as error:  # a bug, not a retryable condition: fail the step loudly
        log.exception("job %s crashed", request.job_id)
        _record_failure(
            request, JobError(code="internal_error", message=f"{type(error).__name__}: {error}")
        )
        return Delivered(JobRun.FAILED)


def _prepare_and_work(
    delivery: Delivery, service: JobService, prepare: Prepare | None
) -> Delivered:
    """Heavy work in `prepare`, outside any transaction; the job's transaction only records.
    While it is open, heavy entry points refuse to run (orchestrator.db.compute_guard)."""
    request = delivery.request
    prepared = prepare(request) if prepare is not None else None
    for _ in range(MAX_PREPARES):
        try:
            with (
                transaction() as session,
                write_transaction_open(f"job {request.kind.value}:{request.job_id}"),
            ):
                return _work(session, delivery, service, prepared)
        except PrepareAgain as again:
            log.info("job %s prepares again: %s", request.job_id, again.reason)
            prepared = again.prepare(request)
    raise JobFailure(
        INPUTS_CHANGING,
        f"the inputs of job {request.job_id} changed each time it was prepared",
        retryable=True,
    )


def _work(
    session: Session, delivery: Delivery, service: JobService, prepared: Any = None
) -> Delivered:
    """The job's transaction: the service's work, the job's fate and its outcome signal."""
    request = delivery.request
    taken = _taken_meanwhile(session, request)
    if taken is not None:
        return Delivered(taken)
    context = JobContext(
        request=request,
        session=session,
        storage_dir=get_settings().resolved_storage_dir,
        prepared=prepared,
    )
    try:
        result = service(context)
    except JobFailure as failure:
        if not failure.keep_results or (failure.retryable and delivery.retries_left):
            raise
        # The service's writes commit with the failure and its outcome signal.
        fail_job(session, request, _error_of(failure))
        return Delivered(JobRun.FAILED, _apply_here(session, request))
    _finish(session, request, result)
    return Delivered(JobRun.SUCCEEDED, _apply_here(session, request))


def _error_of(failure: JobFailure) -> JobError:
    return JobError(code=failure.code, message=failure.message, retryable=failure.retryable)


def _claim(request: JobRequest) -> JobRun:
    """Mark the job started (one more delivery); the message arrived, so it was published
    (even if its send reported an error): the outbox sweep must not resend it."""
    now = utcnow()
    engine = get_engine()
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            row = connection.execute(_CLAIM_AT_ONCE, {"job_id": request.job_id, "now": now}).first()
        if row is not None and row.claimed:
            return JobRun.SUCCEEDED
        return _not_runnable(row.status if row is not None else None, request)
    with transaction() as session:
        claimed = session.execute(_CLAIM, {"job_id": request.job_id, "now": now}).first()
        if claimed is None:
            return _not_runnable(session.scalar(_STATUS, {"job_id": request.job_id}), request)
        session.execute(_MARK_PUBLISHED, {"job_id": request.job_id, "now": now})
    return JobRun.SUCCEEDED


def _not_runnable(status: str | None, request: JobRequest) -> JobRun:
    if status is None:
        log.error("job %s is unknown; dropping the message", request.job_id)
        return JobRun.SKIPPED
    if status == JobStatus.SUCCEEDED.value:
        return JobRun.ALREADY_FINISHED
    if status == JobStatus.FAILED.value:
        return JobRun.ALREADY_FAILED
    return JobRun.SKIPPED  # cancelled


def _taken_meanwhile(session: Session, request: JobRequest) -> JobRun | None:
    """Re-check under lock: a duplicate delivery, a sweep or a cancel may have finished
    it since the claim. None: it is still ours to run."""
    row = session.execute(_OURS, {"job_id": request.job_id}).first()
    if row is None or row.status != JobStatus.STARTED.value:
        return _not_runnable(row.status if row is not None else None, request)
    if row.run_status in ("cancelled", "completed"):
        return JobRun.SKIPPED
    return None


def _apply_here(session: Session, request: JobRequest) -> AfterCommit | None:
    """Apply the outcome in this transaction if the run is free; a failure here rolls
    back to the savepoint and leaves the outcome to the coordinator, never the job's work."""
    if not get_settings().inline_coordination:
        return None
    try:
        with session.begin_nested():
            applied = apply_if_free(session, request.run_id)
    except Exception:
        log.warning(
            "applying the outcome of job %s in its transaction failed; the coordinator will",
            request.job_id,
            exc_info=True,
        )
        return None
    return applied[1] if applied is not None else None


def _finish(session: Session, request: JobRequest, result: JobResult) -> None:
    outcome = _outcome(request, succeeded=True, summary=result.summary)
    if result.artifact is not None:
        outcome = outcome.model_copy(update={"artifact": result.artifact})
    signal_type = STEP_SPECS[request.step].completion_signal or SignalType.JOB_COMPLETED
    _set_status(session, request, JobStatus.SUCCEEDED, summary=result.summary)
    insert_signal(session, _outcome_signal(request, signal_type, outcome))
    resolve_by_success(
        session, request.run_id, request.step.value, request.job_id, request.attempt, utcnow()
    )


def _record_failure(request: JobRequest, error: JobError) -> None:
    with transaction() as session:
        status = session.scalar(_STATUS.with_for_update(), {"job_id": request.job_id})
        if status != JobStatus.STARTED.value:
            return
        fail_job(session, request, error)


def fail_job(session: Session, request: JobRequest, error: JobError) -> None:
    """Mark the job failed and post its job_failed outcome, in the caller's transaction."""
    _set_status(session, request, JobStatus.FAILED, error=error.model_dump())
    outcome = _outcome(request, succeeded=False).model_copy(update={"error": error})
    insert_signal(session, _outcome_signal(request, SignalType.JOB_FAILED, outcome))


def _set_status(
    session: Session,
    request: JobRequest,
    status: JobStatus,
    *,
    summary: dict[str, object] | None = None,
    error: dict[str, object] | None = None,
) -> None:
    session.execute(
        _FINISHED,
        {
            "job_id": request.job_id,
            "new_status": status.value,
            "new_summary": summary,
            "new_error": error,
            "now": utcnow(),
        },
    )


def _outcome(
    request: JobRequest, *, succeeded: bool, summary: dict[str, object] | None = None
) -> JobOutcome:
    return JobOutcome(
        job_id=request.job_id,
        run_id=request.run_id,
        step=request.step,
        attempt=request.attempt,
        idempotency_key=request.idempotency_key,
        trace_id=request.trace_id,
        tenant_id=request.tenant_id,
        organization_id=request.organization_id,
        assessment_id=request.assessment_id,
        actor_id=request.actor_id,
        succeeded=succeeded,
        summary=dict(summary or {}),
    )


def _outcome_signal(
    request: JobRequest, signal_type: SignalType, outcome: JobOutcome
) -> SignalEnvelope:
    return SignalEnvelope(
        type=signal_type,
        run_id=request.run_id,
        tenant_id=request.tenant_id,
        organization_id=request.organization_id,
        assessment_id=request.assessment_id,
        trace_id=request.trace_id,
        actor_id=f"job:{request.kind.value}",
        # One outcome per job: a re-delivery's signal is a duplicate, never a second one.
        idempotency_key=f"outcome:{request.job_id}",
        step=request.step,
        payload=outcome.model_dump(mode="json"),
        received_at=utcnow(),
    )
