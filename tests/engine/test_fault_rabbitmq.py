"""RabbitMQ faults on a private node (quorum queues, publisher confirms, late acks): a
worker killed while it holds unacknowledged messages, and the broker restarted under load.

Every run completes, every step completes once, every job's outcome is recorded once and
nothing is dead-lettered: what a dead worker held is re-delivered by the broker, what the
restart interrupted is re-delivered or sent again by the sweeps.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.steps import STEP_ORDER
from orchestrator.db.models import InboxSignal, Job
from orchestrator.db.session import transaction
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support import rabbitmq
from tests.support.faults import (
    FAST_SWEEPS,
    SLOW_READER_ENV,
    Reviewers,
    beat,
    dead_letters,
    jobs_running,
    restarts_under_load,
)
from tests.support.fleet_runs import new_tenant, start_assessment, step_counts
from tests.support.polling import wait_for
from tests.support.rabbitmq import PrivateRabbitMQ

pytestmark = [pytest.mark.integration, pytest.mark.rabbitmq, pytest.mark.faults]
RESTARTS = 2
# This module's fleets use a private RabbitMQ node (fixtures shared with other fault tests).
private_rabbitmq = rabbitmq.private_rabbitmq
broker_url = rabbitmq.broker_url


@pytest.fixture
def fast_sweeps(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, value in FAST_SWEEPS.items():
        monkeypatch.setenv(name, value)
        fleet.env[name] = value
    reset_settings()
    yield
    reset_settings()


def _outcomes_per_job(run_ids: list[uuid.UUID]) -> dict[str, int]:
    """How many outcome signals each job of these runs recorded."""
    with transaction() as session:
        jobs = list(session.scalars(select(Job.id).where(Job.run_id.in_(run_ids))))
        rows = session.execute(
            select(InboxSignal.idempotency_key, func.count())
            .where(InboxSignal.run_id.in_(run_ids))
            .group_by(InboxSignal.idempotency_key)
        ).all()
    counts = {str(key): int(count) for key, count in rows}
    return {job: counts.get(f"outcome:{job}", 0) for job in jobs}


def _each_step_once(run_ids: list[uuid.UUID]) -> None:
    for run_id in run_ids:
        assert step_counts(run_id) == {(step.value, "completed"): 1 for step in STEP_ORDER}


def test_a_killed_worker_s_unacked_jobs_are_redelivered_and_done_once(fleet: Fleet) -> None:
    fleet.start("orchestrator", concurrency=2)
    fleet.start("kb_index,analysis,reporting", concurrency=2)
    # Two threads, each holding one ingestion job it received and never acknowledged.
    doomed = fleet.start(
        "ingestion",
        concurrency=2,
        extra_env={"LIFECYCLE_HOLD_JOB_STEP": "ingest_documents"},
        include=("orchestrator.testing.held_jobs",),
    )
    owner, reviewer = new_tenant()
    run_ids = [start_assessment(owner, documents=1).id for _ in range(2)]
    wait_for(
        lambda: jobs_running(run_ids, "ingest_documents") == 2,
        timeout_s=60,
        what="both ingestion jobs held by the doomed worker",
    )

    fleet.kill(doomed)
    fleet.start("ingestion", concurrency=2)
    finals = Reviewers(reviewer).drive(run_ids, timeout_s=180)

    assert {run.status for run in finals.values()} == {"completed"}, finals
    _each_step_once(run_ids)
    assert set(_outcomes_per_job(run_ids).values()) == {1}
    with transaction() as session:
        ingest = list(
            session.scalars(
                select(Job).where(Job.run_id.in_(run_ids), Job.step == "ingest_documents")
            )
        )
    # Each was delivered to the killed worker and once more, by the broker, to the new one.
    assert [job.deliveries for job in ingest] == [2, 2]
    assert dead_letters(run_ids) == 0


def test_runs_complete_once_across_rabbitmq_restarts_under_load(
    fast_sweeps: None, fleet: Fleet, private_rabbitmq: PrivateRabbitMQ, tmp_path: Path
) -> None:
    slow = {**SLOW_READER_ENV, "LIFECYCLE_TEST_SLOW_PARSE_S": "6"}
    names = [
        fleet.start(queues, concurrency=2, extra_env=slow)
        for queues in ("orchestrator", "ingestion,kb_index", "analysis,reporting")
    ]
    owner, reviewer = new_tenant()
    reviewers = Reviewers(reviewer)
    with beat(fleet, tmp_path) as scheduler:
        run_ids = [start_assessment(owner, documents=2).id for _ in range(2)]
        recoveries = restarts_under_load(
            fleet,
            names,
            owner,
            reviewers,
            run_ids,
            private_rabbitmq.restart,
            times=RESTARTS,
            answer_timeout_s=90,
        )
        finals = reviewers.drive(run_ids, timeout_s=300)
        assert scheduler.poll() is None, "celery beat exited"

    assert {run.status for run in finals.values()} == {"completed"}, finals
    _each_step_once(run_ids)
    assert set(_outcomes_per_job(run_ids).values()) == {1}
    assert dead_letters(run_ids) == 0
    print(
        f"\nRabbitMQ restarts: {RESTARTS}, runs completed: {len(finals)}, "
        f"workers answering again after {', '.join(f'{s:.1f}' for s in recoveries)} s"
    )
