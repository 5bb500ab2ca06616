"""Tenant order with real worker processes: tenant A queues a backlog of runs, then
tenant B one; B's first job (and on Redis B's wake-up) is taken right after A's first,
not after A's whole backlog: by priorities on Redis, by A's backlog giving way at delivery
on RabbitMQ. The workers start only once everything is queued, so the order
the broker hands messages out in is all that is observed. The queue's oldest-message age
still sees the backlog behind the first messages."""

from __future__ import annotations

import time
import uuid
from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from orchestrator.db.models import Job, StepExecution
from orchestrator.db.session import transaction
from orchestrator.engine import messages
from orchestrator.engine.broker_topology import is_amqp
from orchestrator.observability import celery_hooks
from orchestrator.observability.broker_view import queue_depth
from orchestrator.testing.reset import reset_process_state
from orchestrator.testing.worker_processes import WorkerProcesses
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import wait_for

INSTANT = ("orchestrator.testing.instant_worker",)
BACKLOG = 6


def _first_steps(run_ids: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    """Each run's first step row, written by the coordinator's first wake-up for it."""
    with transaction() as session:
        rows = session.execute(
            select(StepExecution.run_id, func.min(StepExecution.id))
            .where(StepExecution.run_id.in_(run_ids))
            .group_by(StepExecution.run_id)
        ).all()
    return {run_id: first for run_id, first in rows}


def _ingestion_jobs(run_ids: list[uuid.UUID]) -> list[Job]:
    with transaction() as session:
        return list(
            session.scalars(select(Job).where(Job.run_id.in_(run_ids), Job.queue == "ingestion"))
        )


@pytest.mark.broker_matrix
def test_another_tenants_first_run_is_taken_ahead_of_a_backlog(
    fleet: WorkerProcesses, broker_url: str
) -> None:
    a_owner, _ = new_tenant()
    b_owner, _ = new_tenant()
    a_runs = [start_assessment(a_owner, documents=1).id for _ in range(BACKLOG)]
    b_run = start_assessment(b_owner, documents=1).id
    every = [*a_runs, b_run]

    fleet.start("orchestrator", concurrency=1, include=INSTANT)
    wait_for(
        lambda: len(_ingestion_jobs(every)) == len(every),
        what="every run's ingestion job queued",
    )
    woken = sorted(every, key=_first_steps(every).__getitem__)
    if not is_amqp(broker_url):  # RabbitMQ: wake-ups are first in, first out (tenant_order)
        # A's first start went ahead of B's (both first of their tenant); A's others after B.
        assert woken.index(b_run) == 1, woken.index(b_run)

    # RabbitMQ: every backlog message looks behind it, however briefly it waited.
    give_way = {"LIFECYCLE_TENANT_GIVE_WAY_AFTER_S": "0"}
    fleet.start(
        "ingestion,kb_index,analysis,reporting",
        concurrency=1,
        include=INSTANT,
        extra_env=give_way,
    )
    wait_for(
        lambda: all(job.started_at is not None for job in _ingestion_jobs(every)),
        what="every ingestion job started",
    )
    started = sorted((job.started_at, job.run_id) for job in _ingestion_jobs(every))
    order = [run_id for _, run_id in started]
    # One job of A's backlog per worker process at most ahead of B's first job.
    assert order.index(b_run) <= 1, order.index(b_run)
    assert order.index(b_run) < order.index(a_runs[1])


def test_a_queues_oldest_message_is_seen_behind_first_messages(
    broker_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backlog sits at a later priority step: the queue's oldest-message age is the
    oldest of every step's next message, not the next one taken."""
    if is_amqp(broker_url):
        pytest.skip("priority steps are Redis lists")
    monkeypatch.setenv("LIFECYCLE_BROKER_URL", broker_url)
    reset_process_state()
    clock = iter([1_000.0, time.time()])  # the stamp of each publish (celery_hooks)
    monkeypatch.setattr(celery_hooks, "time", SimpleNamespace(time=lambda: next(clock)))
    messages.send_job("ingestion.ingest_documents", "ingestion", "old", {}, priority=9)
    messages.send_job("ingestion.ingest_documents", "ingestion", "new", {}, priority=None)
    with messages.get_app().connection_for_read() as connection:
        depth = queue_depth(connection.default_channel, "ingestion")
    assert depth.messages == 2
    assert depth.oldest_age_s is not None and depth.oldest_age_s > time.time() - 1_001.0
    reset_process_state()
