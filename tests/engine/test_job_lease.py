"""A started job whose worker froze is re-dispatched once its lease lapses, long before
its kind's deadline; the frozen worker's late result doubles nothing.

Real worker processes and a real `celery beat`; the lease is short here (6 s, renewed every
second) and the job deadlines stay at their defaults (15 minutes for ingestion), so only the
lease can explain the re-dispatch.
"""

from __future__ import annotations

import os
import re
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.audit import AuditEventType
from orchestrator.db.models import Job, WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.faults import DEFAULT_REDELIVERY, SLOW_READER_ENV, beat, start_slow_run
from tests.support.fleet_runs import audit_counts, chunk_count, new_tenant
from tests.support.polling import poll, wait_for

pytestmark = pytest.mark.integration
LEASE = {
    # Redis gives the frozen worker's message back only after hours, as shipped.
    **DEFAULT_REDELIVERY,
    "LIFECYCLE_SWEEP_JOB_LEASE_S": "6",
    "LIFECYCLE_JOB_HEARTBEAT_INTERVAL_S": "1",
    "LIFECYCLE_SWEEP_INTERVAL_S": "1",
    # Frozen inside a transaction (planning its batches), the worker holds row locks the
    # other's delivery waits on: the server ends that transaction, as it does a hung one.
    "LIFECYCLE_DATABASE_IDLE_TRANSACTION_TIMEOUT_S": "10",
}
#: Long enough that the frozen worker is still inside the job when it is frozen.
SLOW = {**SLOW_READER_ENV, "LIFECYCLE_TEST_SLOW_PARSE_S": "20"}


@pytest.fixture
def leases(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, value in LEASE.items():
        monkeypatch.setenv(name, value)
    fleet.env.update(LEASE)
    reset_settings()
    yield
    reset_settings()


def _job(job_id: str) -> Job | None:
    with transaction() as session:
        return session.scalar(select(Job).where(Job.id == job_id))


@pytest.mark.broker_matrix
def test_a_frozen_workers_job_is_redispatched_when_its_lease_lapses(
    leases: None, fleet: Fleet, tmp_path: Path
) -> None:
    fleet.start("orchestrator", concurrency=2)
    frozen = fleet.start("ingestion", concurrency=1, extra_env=SLOW)
    owner, _ = new_tenant()
    with beat(fleet, tmp_path):
        run_id = start_slow_run(owner)
        job_id = f"{run_id}:ingest_documents:1"
        wait_for(
            lambda: (job := _job(job_id)) is not None and job.status == "started",
            timeout_s=60,
            what="the ingestion job started",
        )
        process = fleet.workers[frozen]
        os.kill(process.pid, signal.SIGSTOP)  # its lease renewals stop with it
        try:
            fleet.start("ingestion", concurrency=1, extra_env=SLOW)
            done = poll(
                lambda: _job(job_id),
                lambda job: job is not None and job.status == "succeeded",
                timeout_s=120,
                what="the job re-dispatched and finished by the other worker",
            )
        finally:
            os.kill(process.pid, signal.SIGCONT)
        assert done is not None and done.deliveries == 2
        chunks = chunk_count(_assessment_of(run_id))
        # The frozen worker wakes, finishes its parse and finds the job done: it commits
        # nothing (its task reports the delivery skipped). If the database closed its
        # connection meanwhile, the delivery ends in a retry, and the retry finds the job
        # done: the counts below hold either way.
        ended = re.compile(rf"\[{re.escape(job_id)}\] (succeeded|raised|ignored|revoked|retry)")
        wait_for(
            lambda: ended.search(fleet.log_of(frozen)) is not None,
            timeout_s=120,
            what="the woken worker's delivery to end",
        )
    audits = audit_counts(run_id)
    redispatched = AuditEventType.LIFECYCLE_WORKFLOW_JOB_REDISPATCHED.value
    assert audits[(redispatched, "ingest_documents")] == 1
    assert chunk_count(_assessment_of(run_id)) == chunks
    assert audits[("lifecycle_workflow_step_completed", "ingest_documents")] == 1


def _assessment_of(run_id: uuid.UUID) -> uuid.UUID:
    with transaction() as session:
        run = session.get(WorkflowRun, run_id)
        assert run is not None
        return run.assessment_id
