"""Operators' read models: runs counted by status and step, and the runs that look stuck.

Stuck means one of: an active run unchanged past the threshold (not one waiting for a
person), a job queued past the threshold that no worker has taken (no consumer), or an
approval wait the approval sweep has escalated and that is still open.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.jobs import JobStatus
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Job, WorkflowRun
from orchestrator.db.ops_models import SweepMark
from orchestrator.db.session import read_transaction
from orchestrator.service.producer import Actor

_MOVING = (
    WorkflowStatus.PENDING.value,
    WorkflowStatus.RUNNING.value,
    WorkflowStatus.BLOCKED.value,
    WorkflowStatus.FAILED.value,
)


@dataclass(frozen=True)
class StatusCount:
    status: str
    step: str | None
    runs: int


@retry_busy
def counts_by_status_and_step(actor: Actor) -> list[StatusCount]:
    query = select(WorkflowRun.status, WorkflowRun.current_step, func.count()).where(
        WorkflowRun.tenant_id == actor.tenant_id
    )
    if actor.organizations is not None:
        query = query.where(WorkflowRun.organization_id.in_(actor.organizations))
    query = query.group_by(WorkflowRun.status, WorkflowRun.current_step)
    with read_transaction() as session:
        rows = [
            StatusCount(status, step, int(count)) for status, step, count in session.execute(query)
        ]
    return sorted(rows, key=lambda r: (r.status, r.step or ""))


@dataclass(frozen=True)
class StuckRun:
    run_id: uuid.UUID
    status: str
    step: str | None
    why: str
    since: datetime

    @classmethod
    def of(cls, run: WorkflowRun, why: str, since: datetime) -> StuckRun:
        return cls(run.id, run.status, run.current_step, why, _aware(since))


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


@retry_busy
def stuck_runs(actor: Actor, threshold_s: float) -> list[StuckRun]:
    cutoff = utcnow() - timedelta(seconds=threshold_s)
    scoped = [WorkflowRun.tenant_id == actor.tenant_id]
    if actor.organizations is not None:
        scoped.append(WorkflowRun.organization_id.in_(actor.organizations))
    found: list[StuckRun] = []
    with read_transaction() as session:
        for run in session.scalars(
            select(WorkflowRun)
            .where(*scoped, WorkflowRun.status.in_(_MOVING), WorkflowRun.updated_at < cutoff)
            .order_by(WorkflowRun.updated_at)
            .limit(200)
        ):
            found.append(StuckRun.of(run, "unchanged past the threshold", run.updated_at))
        for job, run in session.execute(
            select(Job, WorkflowRun)
            .join(WorkflowRun, WorkflowRun.id == Job.run_id)
            .where(
                *scoped,
                Job.status == JobStatus.QUEUED.value,
                Job.deliveries == 0,
                Job.created_at < cutoff,
            )
            .order_by(Job.created_at)
            .limit(200)
        ):
            why = f"job {job.id} queued on {job.queue} with no consumer"
            found.append(StuckRun.of(run, why, job.created_at))
        waiting = WorkflowStatus.WAITING_FOR_APPROVAL.value
        for mark, run in session.execute(
            select(SweepMark, WorkflowRun)
            .join(WorkflowRun, WorkflowRun.id == SweepMark.run_id)
            .where(*scoped, SweepMark.mark == "escalated", WorkflowRun.status == waiting)
            .order_by(SweepMark.created_at)
            .limit(200)
        ):
            if mark.key.split(":")[0] == run.current_step:
                found.append(StuckRun.of(run, "approval past its escalation", mark.created_at))
    return sorted(found, key=lambda s: s.since)
