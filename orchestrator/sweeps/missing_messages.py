"""Send again, within seconds, the message of a queued job that the broker no longer has.

The coordinator marks a job's outbox row published in its own transaction and sends the
message right after the commit (one transaction per wake-up). The message can then be lost
without a trace in the database: the process dies between commit and send, or the broker
loses what it held (a Redis restarted without persistence, FLUSHALL, a failover). So every
few seconds this sweep takes the queued jobs older than the grace period and asks the
broker which of their messages still wait in their queue (read from the oldest end, so a
backlog costs one chunk) and which the live workers hold. A job in neither is sent again,
under its own task id (a duplicate is a no-op for the job runtime). A legitimate backlog is
never sent twice: its messages are in the queue.

Order matters: the database first, then the queue, then the workers, then the database
again under `FOR UPDATE SKIP LOCKED` with the job still queued and unchanged. A message a
worker takes off the queue between two reads is in that worker's holdings; a job claimed
meanwhile is no longer queued.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.config.sweep_registry import sweep
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.jobs import JobKind, JobStatus
from orchestrator.db.models import Job, WorkflowRun
from orchestrator.db.ops_models import JobWatch
from orchestrator.db.session import read_transaction, transaction
from orchestrator.db.sql import insert_for
from orchestrator.engine.messages import get_app
from orchestrator.engine.outbox import OutboxEntry
from orchestrator.engine.routing import ROUTES, jobs_by_queue
from orchestrator.observability.broker_view import BrokerView
from orchestrator.sweeps.sweep_actions import SweepMessages, append_audit

log = logging.getLogger(__name__)

#: The reason a re-send gives in the audit trail (a broker fault, not the job's).
MESSAGE_MISSING = "message_missing"


@dataclass(frozen=True)
class MissingMessages:
    checked: int
    """Queued jobs whose messages were looked for."""
    resent: int


#: A queued job as first read: its kind and when it last changed (re-read before a send).
_Queued = dict[str, tuple[str, datetime]]


@sweep("messages")
def resend_missing_messages(view: BrokerView | None = None) -> MissingMessages:
    settings = get_settings().sweeps
    cutoff = utcnow() - settings.grace
    with read_transaction() as session:
        queued = _queued_before(session, cutoff, settings.message_check_batch)
    if not queued:
        return MissingMessages(0, 0)
    view = view or BrokerView(get_app())
    missing = _not_in_queues(view, jobs_by_queue((i, kind) for i, (kind, _) in queued.items()))
    if missing:
        missing -= view.holdings().task_ids
    resent = _resend({job_id: queued[job_id][1] for job_id in missing}) if missing else 0
    return MissingMessages(len(queued), resent)


def _queued_before(session: Session, cutoff: datetime, limit: int) -> _Queued:
    """Queued jobs past the grace period whose last (re-)send is past it too; oldest first,
    as they stand in their queues."""
    rows = session.execute(
        select(Job.id, Job.kind, Job.updated_at)
        .outerjoin(JobWatch, JobWatch.job_id == Job.id)
        .where(
            Job.status == JobStatus.QUEUED.value,
            Job.updated_at < cutoff,
            or_(JobWatch.redispatched_at.is_(None), JobWatch.redispatched_at < cutoff),
        )
        .order_by(Job.updated_at)
        .limit(limit)
    ).all()
    return {row.id: (row.kind, row.updated_at) for row in rows}


def _not_in_queues(view: BrokerView, by_queue: dict[str, list[str]]) -> set[str]:
    missing: set[str] = set()
    for queue, ids in by_queue.items():
        present = view.present(queue, ids)
        if present is None:
            # The broker can only count (AMQP): an empty queue has lost them all; with
            # messages waiting, which ones is unknowable here and nothing is resent.
            if view.depth(queue).messages == 0:
                missing.update(ids)
            continue
        missing.update(set(ids) - present)
    return missing


def _resend(unchanged: dict[str, datetime]) -> int:
    """Send again the jobs still queued and unchanged since they were looked for."""
    now = utcnow()
    after = SweepMessages()
    with transaction() as session:
        jobs = session.scalars(
            select(Job)
            .where(
                Job.id.in_(list(unchanged)),
                Job.status == JobStatus.QUEUED.value,
            )
            .with_for_update(skip_locked=True)
        ).all()
        runs: dict[uuid.UUID, WorkflowRun] = {}
        for job in jobs:
            if job.updated_at != unchanged[job.id] or not _claim_resend(session, job.id, now):
                continue  # it moved since it was looked for, or another sweep resent it
            run = runs.get(job.run_id) or session.get(WorkflowRun, job.run_id)
            assert run is not None
            runs[run.id] = run
            details = {"job_id": job.id, "kind": job.kind, "reason": MESSAGE_MISSING}
            append_audit(
                session, run, AuditEventType.LIFECYCLE_WORKFLOW_JOB_REDISPATCHED, job.step,
                details, now,
            )  # fmt: skip
            route = ROUTES[JobKind(job.kind)]
            after.jobs.append(OutboxEntry(route.task_name, route.queue, job.id, dict(job.request)))
    after.send()
    if after.jobs:
        log.warning("re-sent %d job message(s) the broker did not have", len(after.jobs))
    return len(after.jobs)


def _claim_resend(session: Session, job_id: str, now: datetime) -> bool:
    """Stamp the re-send on the job's watch row; a re-send is a broker fault, so it does not
    count against the job's re-dispatch limit. Only one of two racing sweeps gets it."""
    recent = now - get_settings().sweeps.grace
    claimed = session.execute(
        insert_for(session, JobWatch)
        .values(job_id=job_id, redispatches=0, redispatched_at=now)
        .on_conflict_do_update(
            index_elements=["job_id"],
            set_={"redispatched_at": now},
            where=or_(JobWatch.redispatched_at.is_(None), JobWatch.redispatched_at < recent),
        )
        .returning(JobWatch.job_id)
    ).scalar()
    return claimed is not None
