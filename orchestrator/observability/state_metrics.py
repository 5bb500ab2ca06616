"""Gauges of the fleet's state, read from the database when Prometheus scrapes.

The database is the record of state, so these are right whichever process serves them
and however many processes run: runs by status, jobs by status, kind and queue, open
waits by step and age, SLA breaches, dead letters, reassessments by status (a failed one
waits for a person to retry it), and the inbox and outbox backlogs.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.signals import SignalFate
from orchestrator.contracts.steps import StepStatus
from orchestrator.db.continuous_models import Reassessment
from orchestrator.db.models import InboxSignal, Job, OutboxMessage, StepExecution, WorkflowRun
from orchestrator.db.ops_models import DeadLetter, SweepMark
from orchestrator.db.session import read_transaction
from orchestrator.observability.scrape import scraped

#: Age buckets of open waits: label -> upper bound.
WAIT_AGES: tuple[tuple[str, timedelta | None], ...] = (
    ("under_1h", timedelta(hours=1)),
    ("1h_to_1d", timedelta(days=1)),
    ("1d_to_7d", timedelta(days=7)),
    ("over_7d", None),
)
SLA_MARK = "sla_breached"


class StateCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        yield from scraped("lifecycle_state_scrape_ok", "database", _read)


def _read() -> list[Metric]:
    with read_transaction() as session:
        return list(_families(session))


def _families(session: Session) -> Iterator[Metric]:
    yield _runs_by_status(session)
    yield _jobs_by_status(session)
    yield _tenant_jobs(session)
    yield _open_waits(session)
    yield _reassessments(session)
    breaches = CounterMetricFamily(
        "lifecycle_sla_breaches", "Runs that crossed their SLA deadline (ever)."
    )
    breaches.add_metric(
        [],
        _count(
            session, select(func.count()).select_from(SweepMark).where(SweepMark.mark == SLA_MARK)
        ),
    )
    yield breaches
    letters = GaugeMetricFamily("lifecycle_dead_letters", "Dead-lettered jobs.", labels=["state"])
    resolved = _count(
        session,
        select(func.count()).select_from(DeadLetter).where(DeadLetter.resolved_at.is_not(None)),
    )
    pending = _count(
        session,
        select(func.count())
        .select_from(DeadLetter)
        .where(DeadLetter.replayed_at.is_(None), DeadLetter.resolved_at.is_(None)),
    )
    total = _count(session, select(func.count()).select_from(DeadLetter))
    letters.add_metric(["pending"], pending)
    letters.add_metric(["replayed"], total - pending - resolved)
    letters.add_metric(["resolved"], resolved)
    yield letters
    yield GaugeMetricFamily(
        "lifecycle_inbox_pending_signals",
        "Signals not decided yet.",
        value=_count(
            session,
            select(func.count())
            .select_from(InboxSignal)
            .where(InboxSignal.fate == SignalFate.PENDING.value),
        ),
    )
    yield GaugeMetricFamily(
        "lifecycle_outbox_unpublished",
        "Job messages not published yet.",
        value=_count(
            session,
            select(func.count())
            .select_from(OutboxMessage)
            .where(OutboxMessage.published_at.is_(None)),
        ),
    )


def _count(session: Session, query: object) -> int:
    return int(session.scalar(query) or 0)  # type: ignore[call-overload]


def _runs_by_status(session: Session) -> Metric:
    family = GaugeMetricFamily("lifecycle_runs", "Runs by status.", labels=["status"])
    rows = session.execute(
        select(WorkflowRun.status, func.count()).group_by(WorkflowRun.status)
    ).all()
    for status, count in rows:
        family.add_metric([status], count)
    return family


def _jobs_by_status(session: Session) -> Metric:
    # A job's queue follows from its kind, so the queue label adds no series. Not
    # `lifecycle_jobs`: the deliveries counter `lifecycle_jobs_total` owns that name.
    family = GaugeMetricFamily(
        "lifecycle_jobs_current",
        "Jobs now in each status, by kind and queue (one per job, not per delivery).",
        labels=["status", "kind", "queue"],
    )
    rows = session.execute(
        select(Job.status, Job.kind, Job.queue, func.count()).group_by(
            Job.status, Job.kind, Job.queue
        )
    ).all()
    for status, kind, queue, count in rows:
        family.add_metric([status, kind, queue], count)
    return family


def _tenant_jobs(session: Session) -> Metric:
    """Each tenant's queued and running jobs per queue: fair sharing at work (a tenant at
    its limit keeps `started` at the limit while its `queued` waits)."""
    family = GaugeMetricFamily(
        "lifecycle_tenant_jobs",
        "Queued and running jobs by tenant and queue.",
        labels=["tenant", "queue", "status"],
    )
    rows = session.execute(
        select(WorkflowRun.tenant_id, Job.queue, Job.status, func.count())
        .join(WorkflowRun, WorkflowRun.id == Job.run_id)
        .where(Job.status.in_(("queued", "started")))
        .group_by(WorkflowRun.tenant_id, Job.queue, Job.status)
    ).all()
    for tenant, queue, status, count in rows:
        family.add_metric([tenant, queue, status], count)
    return family


def _reassessments(session: Session) -> Metric:
    family = GaugeMetricFamily(
        "lifecycle_reassessments", "Reassessments by status.", labels=["status"]
    )
    rows = session.execute(
        select(Reassessment.status, func.count()).group_by(Reassessment.status)
    ).all()
    for status, count in rows:
        family.add_metric([status], count)
    return family


def _open_waits(session: Session) -> Metric:
    family = GaugeMetricFamily(
        "lifecycle_open_waits",
        "Steps waiting for input or approval, by step and age.",
        labels=["step", "age"],
    )
    now = utcnow()
    bucket = case(
        *[
            (StepExecution.started_at > now - bound, label)
            for label, bound in WAIT_AGES
            if bound is not None
        ],
        else_=WAIT_AGES[-1][0],
    )
    rows = session.execute(
        select(StepExecution.step, bucket, func.count())
        .where(StepExecution.status == StepStatus.WAITING.value)
        .group_by(StepExecution.step, bucket)
    ).all()
    for step, age, count in rows:
        family.add_metric([step, age], count)
    return family
