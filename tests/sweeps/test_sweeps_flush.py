"""The broker loses every message mid-lifecycle: the run still completes, no signal lost.

Real worker processes and a real `celery beat` process running the sweeps every second.
The broker is wiped with FLUSHALL twice: once while a signal's "coordinate" message
waits with no consumer, once while a job's message does. The test runs its own Redis
server for this, so FLUSHALL wipes this fleet's broker and nothing else.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from sqlalchemy import select

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.jobs import JobKind
from orchestrator.contracts.steps import STEP_ORDER
from orchestrator.db.models import InboxSignal, Job, OutboxMessage
from orchestrator.db.ops_models import DeadLetter
from orchestrator.db.session import transaction
from orchestrator.demo.reviewer import ScriptedReviewer, drive
from orchestrator.service.producer import get_run, send_signal
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support import faults, private_broker
from tests.support.fleet_runs import audit_counts, new_tenant, start_assessment, step_counts
from tests.support.polling import scaled, wait_for
from tests.support.services import SMALL_FRAMEWORK
from tests.support.sweeps import count

HEAVY = "ingestion,kb_index,analysis,reporting"
FAST_SWEEPS = {
    "LIFECYCLE_SWEEP_INTERVAL_S": "1",
    "LIFECYCLE_SWEEP_GRACE_S": "1",
    "LIFECYCLE_SWEEP_QUEUED_DEADLINE_S": "4",
    # Started jobs are left alone longer than any job of this test takes.
    "LIFECYCLE_SWEEP_JOB_DEADLINE_S": json.dumps({kind.value: 60 for kind in JobKind}),
    "LIFECYCLE_SWEEP_REDISPATCH_LIMIT": "100",
}
# The broker is a Redis server of this test's own, so FLUSHALL wipes nothing else.
private_redis = private_broker.private_redis
broker_url = private_broker.broker_url


@pytest.fixture
def fast_sweeps(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, value in FAST_SWEEPS.items():
        monkeypatch.setenv(name, value)
    reset_settings()
    yield
    reset_settings()


@pytest.fixture
def beat(fast_sweeps: None, fleet: Fleet, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real `celery beat` process; it and every worker started later sweep fast."""
    fleet.env.update(FAST_SWEEPS)
    with faults.beat(fleet, tmp_path) as process:
        yield process


def test_flushing_the_broker_mid_lifecycle_loses_nothing(
    fleet: Fleet, beat: subprocess.Popen[bytes], broker_url: str
) -> None:
    broker = redis.Redis.from_url(broker_url)
    orchestrator = fleet.start("orchestrator", concurrency=2)
    heavy = fleet.start(HEAVY, concurrency=2)
    owner, reviewer = new_tenant()
    run = start_assessment(owner, documents=1)
    wait_for(
        lambda: get_run(owner, run.id).current_step == "wait_for_framework_selection",
        timeout_s=60,
        what="the framework wait",
    )

    # 1. A signal's "coordinate" message is lost.
    fleet.stop(orchestrator)
    fleet.stop(heavy)
    send_signal(
        reviewer, run.id, "framework_selected", "framework", payload={"framework": SMALL_FRAMEWORK}
    )
    broker.flushall()
    assert _fate(run.id, "framework") == "pending"
    fleet.start("orchestrator", concurrency=2)
    scope_job = f"{run.id}:create_scope:1"
    wait_for(
        lambda: _queued_in(broker, "analysis", scope_job),
        timeout_s=30,
        what="the inbox sweep to wake the run, which queues the scope job",
    )

    # 2. The job's message is lost (and any re-dispatch of it so far).
    broker.flushall()
    assert _job_status(scope_job) == "queued"
    fleet.start(HEAVY, concurrency=2)
    final = drive(ScriptedReviewer(reviewer), run.id, timeout_s=scaled(120))

    assert final.status == "completed", (final, beat.poll())
    with transaction() as session:
        fates = dict(
            session.execute(
                select(InboxSignal.idempotency_key, InboxSignal.fate).where(
                    InboxSignal.run_id == run.id
                )
            ).all()
        )
    assert set(fates.values()) == {"applied"}, fates
    assert fates["framework"] == "applied"
    assert step_counts(run.id) == {(step.value, "completed"): 1 for step in STEP_ORDER}
    audits = audit_counts(run.id)
    # Re-sent by a sweep (the outbox sweep, or the lost-job sweep with an audit event).
    assert _outbox_published(scope_job)
    assert audits[("lifecycle_workflow_signal_received", "wait_for_framework_selection")] == 1
    assert _job_status(scope_job) == "succeeded"
    assert count(DeadLetter, DeadLetter.run_id == run.id) == 0
    broker.close()


def _queued_in(broker: redis.Redis, queue: str, task_id: str) -> bool:
    """The job's message waits in the broker (nothing consumes that queue now)."""
    return any(json.loads(raw)["headers"]["id"] == task_id for raw in broker.lrange(queue, 0, -1))


def _fate(run_id: object, key: str) -> str | None:
    with transaction() as session:
        return session.scalar(
            select(InboxSignal.fate).where(
                InboxSignal.run_id == run_id, InboxSignal.idempotency_key == key
            )
        )


def _outbox_published(job_id: str) -> bool:
    with transaction() as session:
        return (
            session.scalar(
                select(OutboxMessage.published_at).where(OutboxMessage.task_id == job_id)
            )
            is not None
        )


def _job_status(job_id: str) -> str | None:
    with transaction() as session:
        return session.scalar(select(Job.status).where(Job.id == job_id))
