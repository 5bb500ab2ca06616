"""Find lost jobs and re-dispatch them, up to a limit; then dead-letter and fail the step.

A started job is lost when its lease lapsed (orchestrator/jobs/heartbeat.py: its process
stopped renewing it, or stopped at its kind's deadline because the task hung); on SQLite,
where no lease is written, when nothing was heard of it within its kind's deadline.
A queued job whose message the broker lost is sent again within seconds by
orchestrator/sweeps/missing_messages.py; one still queued at the queued deadline is lost
only if no live worker consumes its queue or its message is gone (a backlog waits). So is a
started job lost again after a re-dispatch: its copy may still wait behind a backlog. A job
that is running holds its row lock, so `FOR UPDATE SKIP LOCKED` never picks a live job on
PostgreSQL.

Re-dispatching re-publishes the job's own request under its own task id: the runtime
treats a duplicate as a no-op. The guarded upsert of `job_watch` lets only one of two
racing sweeps count (and send) a re-dispatch; the dead letter's unique job id does the
same for giving up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.config.sweep_registry import sweep
from orchestrator.config.sweeps import SweepSettings
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.events import NotificationEvent
from orchestrator.contracts.jobs import JobError, JobKind, JobRequest, JobStatus
from orchestrator.db.models import Job, WorkflowRun
from orchestrator.db.ops_models import DeadLetter, JobWatch
from orchestrator.db.session import transaction
from orchestrator.db.sql import insert_for
from orchestrator.engine.consumers import Consumers, consumers_now
from orchestrator.engine.messages import get_app
from orchestrator.engine.outbox import OutboxEntry
from orchestrator.engine.routing import ROUTES, jobs_by_queue
from orchestrator.jobs.heartbeat import leases_written
from orchestrator.jobs.runtime import fail_job
from orchestrator.observability.broker_view import BrokerView
from orchestrator.sweeps.lost_reason import lost_job_reason
from orchestrator.sweeps.sweep_actions import Occasion, SweepMessages, announce, append_audit

log = logging.getLogger(__name__)

_ACTIVE = (JobStatus.QUEUED.value, JobStatus.STARTED.value)


@dataclass(frozen=True)
class LostJobs:
    redispatched: int
    dead_lettered: int


@sweep("lost_jobs")
def recover_lost_jobs() -> LostJobs:
    settings = get_settings().sweeps
    now = utcnow()
    after = SweepMessages()
    redispatched = dead_lettered = 0
    with transaction() as session:
        lost = _lost(session, now, settings)
        # Asked once per sweep: whether a queue is read decides a backlog and a dead
        # letter's reason.
        consumers = consumers_now() if lost else None
        waiting = _waiting_for_a_worker(lost, consumers)
        for job, watch in lost:
            if job.id in waiting:
                continue
            done = watch.redispatches if watch is not None else 0
            if done < settings.redispatch_limit:
                redispatched += _redispatch(session, job, done, now, after)
            else:
                dead_lettered += _dead_letter(session, job, done, now, settings, after, consumers)
    after.send()
    return LostJobs(redispatched, dead_lettered)


def _lost(session: Session, now: datetime, settings: SweepSettings) -> list[Any]:
    cutoffs = {kind: now - settings.job_deadline(kind) for kind in JobKind}
    queued_cutoff = now - timedelta(seconds=settings.queued_deadline_s)

    def silent_since(cutoff: datetime) -> Any:
        return and_(
            Job.updated_at < cutoff,
            or_(JobWatch.heartbeat_at.is_(None), JobWatch.heartbeat_at < cutoff),
            or_(JobWatch.redispatched_at.is_(None), JobWatch.redispatched_at < cutoff),
        )

    if leases_written(session):
        # A started job is judged by its lease alone, which runs from the claim: a process
        # that stops before its first renewal lets it lapse all the same.
        cutoffs = dict.fromkeys(JobKind, now - timedelta(seconds=settings.job_lease_s))
    # One range of the (status, kind, updated_at) index per kind: only what is due.
    started = [
        and_(Job.status == JobStatus.STARTED.value, Job.kind == kind.value, silent_since(cutoff))
        for kind, cutoff in cutoffs.items()
    ]
    queued = [
        and_(
            Job.status == JobStatus.QUEUED.value,
            Job.kind == kind.value,
            silent_since(queued_cutoff),
        )
        for kind in JobKind
    ]
    return list(
        session.execute(
            select(Job, JobWatch)
            .outerjoin(JobWatch, JobWatch.job_id == Job.id)
            .where(or_(*queued, *started))
            .order_by(Job.updated_at)
            .limit(settings.batch)
            .with_for_update(skip_locked=True, of=Job)
        ).all()
    )


def _waiting_for_a_worker(lost: list[Any], consumers: Consumers | None) -> set[str]:
    """Jobs whose message waits in a queue that a live worker is known to consume: a
    backlog, not a loss (sending a copy would only double it). Two kinds are judged so:
    queued jobs past the queued deadline, and started jobs whose lease lapsed after they
    were re-dispatched (the copy sent then may still wait behind the queue's backlog, or be
    reserved by a live worker; a started job never re-dispatched is sent at once, as its
    worker holds its only message).
    A queue nobody reads, or whose readers are unknown (the embedded broker), is judged as
    a loss. When the broker cannot be read, every such job counts as waiting: nothing is
    judged blind. AMQP can only count: a queued job's missing message is the message
    check's to find, and a re-dispatched copy may wait while its queue holds anything."""
    queued = {job.id for job, _ in lost if job.status == JobStatus.QUEUED.value}
    resent = {
        job.id
        for job, watch in lost
        if job.status == JobStatus.STARTED.value and watch is not None and watch.redispatches
    }
    judged = queued | resent
    read = {queue for queue, workers in (consumers or {}).items() if workers}
    by_queue = jobs_by_queue((job.id, job.kind) for job, _ in lost if job.id in judged)
    view = BrokerView(get_app())
    waiting: set[str] = set()
    held: frozenset[str] | None = None
    try:
        for queue in by_queue.keys() & read:
            ids = set(by_queue[queue])
            present = view.present(queue, ids)
            if present is None:
                present = ids if view.depth(queue).messages else ids & queued
            waiting |= present
            unseen = (ids & resent) - present
            if unseen:
                # A live worker may have taken the copy and not started it yet. One that
                # runs it without renewing its lease has hung: that does not count.
                if held is None:
                    held = view.holdings(running=False).task_ids
                waiting |= unseen & held
    except Exception:
        log.warning("the broker did not answer; queued jobs are judged later", exc_info=True)
        return judged
    return waiting


def _redispatch(session: Session, job: Job, done: int, now: datetime, after: SweepMessages) -> int:
    count = done + 1
    values = {"redispatches": count, "redispatched_at": now}
    claimed = session.execute(
        insert_for(session, JobWatch)
        .values(job_id=job.id, **values)
        .on_conflict_do_update(
            index_elements=["job_id"], set_=values, where=JobWatch.redispatches == done
        )
        .returning(JobWatch.job_id)
    ).scalar()
    if claimed is None:
        return 0  # another sweep re-dispatched it just now
    run = session.get(WorkflowRun, job.run_id)
    assert run is not None
    details = {
        "job_id": job.id,
        "kind": job.kind,
        "job_status": job.status,
        "redispatch": count,
        "deliveries": job.deliveries,
    }
    append_audit(
        session, run, AuditEventType.LIFECYCLE_WORKFLOW_JOB_REDISPATCHED, job.step, details, now
    )
    route = ROUTES[JobKind(job.kind)]
    after.jobs.append(OutboxEntry(route.task_name, route.queue, job.id, dict(job.request)))
    return 1


def _dead_letter(
    session: Session,
    job: Job,
    done: int,
    now: datetime,
    settings: SweepSettings,
    after: SweepMessages,
    consumers: Consumers | None,
) -> int:
    if job.status == JobStatus.QUEUED.value:
        deadline = settings.queued_deadline_s
    elif leases_written(session):
        deadline = settings.job_lease_s
    else:
        deadline = settings.job_deadline(JobKind(job.kind)).total_seconds()
    route = ROUTES[JobKind(job.kind)]
    reason = lost_job_reason(job.id, route.queue, deadline, done, consumers)
    run = session.get(WorkflowRun, job.run_id)
    assert run is not None
    inserted = session.execute(
        insert_for(session, DeadLetter)
        .values(
            job_id=job.id,
            run_id=job.run_id,
            tenant_id=run.tenant_id,
            step=job.step,
            kind=job.kind,
            task_name=route.task_name,
            queue=route.queue,
            request=dict(job.request),
            reason=reason,
            deliveries=job.deliveries,
            redispatches=done,
            created_at=now,
        )
        .on_conflict_do_nothing(index_elements=["job_id"])
        .returning(DeadLetter.id)
    ).scalar()
    if inserted is None:
        return 0
    fail_job(
        session, JobRequest.model_validate(job.request), JobError(code="job_lost", message=reason)
    )
    details = {"job_id": job.id, "kind": job.kind, "reason": reason, "dead_letter_id": inserted}
    announce(
        session,
        Occasion(run, "dead_lettered", job.id, now),
        AuditEventType.LIFECYCLE_WORKFLOW_JOB_DEAD_LETTERED,
        NotificationEvent.JOB_DEAD_LETTERED,
        job.step,
        details,
        after,
    )
    after.kicks.add(run.id)
    return 1


def redispatch_now(job_id: str) -> bool:
    """Re-dispatch one queued or started job at once (an operator resuming a stale run).
    False when the job is finished, unknown, or running right now (its row is locked)."""
    now = utcnow()
    after = SweepMessages()
    with transaction() as session:
        row = session.execute(
            select(Job, JobWatch)
            .outerjoin(JobWatch, JobWatch.job_id == Job.id)
            .where(Job.id == job_id, Job.status.in_(_ACTIVE))
            .with_for_update(skip_locked=True, of=Job)
        ).first()
        if row is None:
            return False
        job, watch = row
        sent = _redispatch(session, job, watch.redispatches if watch else 0, now, after)
    after.send()
    return bool(sent)
