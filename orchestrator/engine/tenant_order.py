"""The order tenants' messages are taken in: a tenant's first goes ahead of a backlog.

Each queue has two levels. A message whose tenant has nothing else waiting on the same
queue (a job: no other queued job of the tenant on that queue; a run's start: no other run
of the tenant with a pending signal) is *first* and is taken before every *backlog*
message, which keeps its publish order behind it. Other wake-ups (a person's decision, a
sweep's re-kick, a job's fallback) are first without a read: a person is waiting on them.
So tenant A's hundred queued jobs delay tenant B's first job by at most what each worker
already holds (one message per process: `worker_prefetch_multiplier=1`), and B's single
run goes through at the pace of an idle fleet while A's backlog drains. Within one level
the queue stays first in, first out; a backlog only waits while first messages keep
arriving, which jobs cannot do faster than the fleet takes them without becoming a
backlog themselves.

Brokers: on Redis, kombu keeps one list per priority step and reads step 0 first (a
message with no priority is at step 0, so the sweeps' re-sends are never held back); on
RabbitMQ 4 quorum queues treat a priority above 4 as high and the rest as normal; the
in-memory broker of the embedded default has one process and no order to keep.

RabbitMQ 3.x quorum queues ignore priorities, so on RabbitMQ the order is also kept where
a message is delivered: a job message (or a batch of a fanned-out job) of a tenant's
backlog gives way when another tenant's first job on its queue was queued after it was
sent, by going back to the end of the queue (`first_behind`). A message gives way once per
such job at most (sent again, it is no longer ahead of it), so a first job waits for what
the workers already hold and one pass over the messages ahead of it, and a first job
whose message was lost costs one pass, not a standstill. Coordinator wake-ups are not held
back this way: they take milliseconds each.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import Enum
from typing import Any

from sqlalchemy import Select, bindparam, exists, select
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.db.ops_models import PENDING_FATE
from orchestrator.db.tables import INBOX, JOBS, RUNS
from orchestrator.engine.broker_topology import is_amqp


class Level(Enum):
    FIRST = "first"
    BACKLOG = "backlog"


#: The message priority of each level, per broker (None: the broker's default).
_REDIS = {Level.FIRST: None, Level.BACKLOG: 9}  # kombu reads step 0 first
_AMQP = {Level.FIRST: 5, Level.BACKLOG: None}  # quorum queues: > 4 is high


def ordering() -> bool:
    """Is the tenant order kept? (not on the embedded broker, or when it is switched off)"""
    settings = get_settings()
    return settings.tenants.fair_order and not settings.is_embedded_broker


def kept_at_delivery() -> bool:
    """Is the order kept by backlog messages giving way when delivered? (on RabbitMQ, whose
    3.x quorum queues ignore priorities; harmless on 4.x, where first jobs start earlier)"""
    return ordering() and is_amqp(get_settings().broker_url)


def priority(level: Level) -> int | None:
    """The message priority that puts a message at this level on the configured broker."""
    if not ordering():
        return None
    return (_AMQP if is_amqp(get_settings().broker_url) else _REDIS)[level]


def _other_queued_job(queue: Any, job_id: Any, tenant_id: Any) -> Select[Any]:
    """Another queued job than `job_id` of tenant `tenant_id` on `queue` (values or the
    columns of an outer query)."""
    job, run = JOBS.alias(), RUNS.alias()
    return (
        select(job.c.id)
        .select_from(job.join(run, run.c.id == job.c.run_id))
        .where(
            job.c.status == "queued",
            job.c.queue == queue,
            job.c.id != job_id,
            run.c.tenant_id == tenant_id,
        )
        .limit(1)
    )


#: Another queued job of the tenant on the queue (statements built once: every enqueue
#: asks, on the coordinator's hot path).
_OTHER_QUEUED_JOB = _other_queued_job(
    bindparam("queue"), bindparam("job_id"), bindparam("tenant_id")
)
_FIRST = JOBS.alias("first")
_FIRST_RUN = RUNS.alias("first_run")
#: Another tenant's first job on the queue (nothing else of its tenant queued there),
#: queued after a given time: behind a message sent then.
_FIRST_BEHIND = (
    select(_FIRST.c.id)
    .select_from(_FIRST.join(_FIRST_RUN, _FIRST_RUN.c.id == _FIRST.c.run_id))
    .where(
        _FIRST.c.queue == bindparam("queue"),
        _FIRST.c.status == "queued",
        _FIRST.c.created_at > bindparam("sent_at"),
        _FIRST_RUN.c.tenant_id != bindparam("tenant_id"),
        ~exists(_other_queued_job(_FIRST.c.queue, _FIRST.c.id, _FIRST_RUN.c.tenant_id)),
    )
    .limit(1)
)
_OWNER = RUNS.alias("owner")
#: Another run of the run's tenant with a signal waiting to be applied.
_OTHER_PENDING_RUN = (
    select(INBOX.c.run_id)
    .select_from(INBOX.join(RUNS, RUNS.c.id == INBOX.c.run_id))
    .where(
        PENDING_FATE,
        INBOX.c.run_id != bindparam("run_id"),
        RUNS.c.tenant_id
        == select(_OWNER.c.tenant_id).where(_OWNER.c.id == bindparam("run_id")).scalar_subquery(),
    )
    .limit(1)
)


def job_level(session: Session, tenant_id: str, queue: str, job_id: str) -> Level:
    """First, unless another job of the tenant is queued on this queue."""
    other = session.scalar(
        _OTHER_QUEUED_JOB, {"queue": queue, "job_id": job_id, "tenant_id": tenant_id}
    )
    return Level.FIRST if other is None else Level.BACKLOG


def job_priority(session: Session, tenant_id: str, queue: str, job_id: str) -> int | None:
    if not ordering():
        return None
    return priority(job_level(session, tenant_id, queue, job_id))


def first_behind(session: Session, tenant_id: str, queue: str, sent_at: datetime) -> bool:
    """Is another tenant's first job on the queue queued after `sent_at`, behind a message
    of this tenant sent then?"""
    found = session.scalar(
        _FIRST_BEHIND, {"queue": queue, "tenant_id": tenant_id, "sent_at": sent_at}
    )
    return found is not None


def wake_level(session: Session, run_id: uuid.UUID) -> Level:
    """First, unless another run of the run's tenant has a signal waiting to be applied."""
    other = session.scalar(_OTHER_PENDING_RUN, {"run_id": run_id})
    return Level.FIRST if other is None else Level.BACKLOG


def wake_behind(session: Session, run_id: uuid.UUID) -> bool:
    """Is a coordinator wake-up for this run its tenant's backlog? Read in the transaction
    that records its signal (a wake-up sent without this read is first: a person's action,
    a sweep's re-kick, a job's fallback never wait behind a backlog, nor for a read)."""
    return ordering() and wake_level(session, run_id) is Level.BACKLOG
