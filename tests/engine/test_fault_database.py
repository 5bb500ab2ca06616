"""PostgreSQL restarts under a running fleet: every run completes, nothing dead-letters.

A private cluster (the test creates, restarts and drops it) under real worker processes
and a real `celery beat`. Ingestion jobs are mid-flight when the server goes down: their
transactions die with it, they are retried, and the parser sandbox of each worker
process serves the retries. A job hung inside its transaction is also found again.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.jobs import JobKind
from orchestrator.db.models import Job
from orchestrator.db.session import transaction
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.faults import (
    FAST_SWEEPS,
    SLOW_READER_ENV,
    Reviewers,
    beat,
    dead_letters,
    jobs_running,
    start_slow_run,
    unrecoverable,
)
from tests.support.fleet_runs import new_tenant, step_counts
from tests.support.polling import poll, wait_for
from tests.support.private_services import PrivatePostgres

pytestmark = [pytest.mark.integration, pytest.mark.faults]
RUNS = 3
OUTAGE_RUNS = 2
OUTAGE_S = 15
INGEST = "ingest_documents"


@pytest.fixture(scope="module")
def private_postgres(services: tuple[str, str]) -> Iterator[PrivatePostgres]:
    cluster = PrivatePostgres()
    cluster.create()
    yield cluster
    cluster.drop()


@pytest.fixture
def postgres_url(private_postgres: PrivatePostgres) -> str:
    """This module's fleets use the private cluster (overrides the shared test server)."""
    return private_postgres.url


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    env = dict(FAST_SWEEPS)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    reset_settings()
    yield env
    reset_settings()


def _ingestion_jobs(run_ids: list[uuid.UUID]) -> list[Job]:
    with transaction() as session:
        return list(session.scalars(select(Job).where(Job.run_id.in_(run_ids), Job.step == INGEST)))


def _running_ingestion(run_ids: list[uuid.UUID]) -> set[str]:
    return {job.id for job in _ingestion_jobs(run_ids) if job.status == "started"}


def _all_ingested(run_ids: list[uuid.UUID]) -> bool:
    try:
        jobs = _ingestion_jobs(run_ids)
    except Exception:  # the server is still coming back
        return False
    return len(jobs) == len(run_ids) and all(job.status == "succeeded" for job in jobs)


@pytest.mark.broker_matrix
def test_a_database_restart_mid_ingestion_completes_every_run(
    fast: dict[str, str], fleet: Fleet, private_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    fleet.env.update(fast)
    fleet.start("orchestrator", concurrency=2)
    fleet.start("ingestion,kb_index", concurrency=2, extra_env=SLOW_READER_ENV)
    fleet.start("analysis,reporting", concurrency=2)
    owner, reviewer = new_tenant()
    reviewers = Reviewers(reviewer)
    with beat(fleet, tmp_path):
        run_ids = [start_slow_run(owner) for _ in range(RUNS)]
        struck_by_restart = poll(
            lambda: _running_ingestion(run_ids),
            lambda running: len(running) >= 2,
            timeout_s=60,
            what="two ingestion jobs mid-flight",
        )
        began = time.monotonic()
        private_postgres.restart()
        wait_for(
            lambda: _all_ingested(run_ids),
            timeout_s=120,
            what="every ingestion job to succeed after the restart",
        )
        recovered_s = time.monotonic() - began

        # Then an outage longer than a job's own retries (1 + 2 + 4 s here), mid-job.
        struck = [start_slow_run(owner) for _ in range(OUTAGE_RUNS)]
        run_ids += struck

        def struck_running() -> set[str]:
            reviewers.step(run_ids)
            return _running_ingestion(struck)

        struck_by_outage = poll(
            struck_running, bool, timeout_s=60, what="an ingestion job mid-flight"
        )
        private_postgres.stop()
        time.sleep(OUTAGE_S)  # the outage itself: nothing is being waited for
        private_postgres.start()
        back = time.monotonic()
        wait_for(
            lambda: _all_ingested(struck),
            timeout_s=120,
            what="the ingestion jobs the outage struck to succeed",
        )
        outage_recovered_s = time.monotonic() - back
        finals = reviewers.drive(run_ids, timeout_s=240)

    assert not unrecoverable(fleet)
    assert {run.status for run in finals.values()} == {"completed"}, finals
    assert dead_letters(run_ids) == 0
    # The faults struck jobs mid-flight (parsing in their Prepare, or in their transaction),
    # and each of those finished once; a job between two statements rides a restart out
    # without a re-delivery, one inside a statement is retried.
    mid_flight = struck_by_restart | struck_by_outage
    assert len(struck_by_restart) >= 2 and len(struck_by_outage) >= 1
    jobs = {job.id: job for job in _ingestion_jobs(run_ids)}
    assert {jobs[job_id].status for job_id in mid_flight} == {"succeeded"}
    retried = [job.id for job in jobs.values() if job.deliveries > 1]
    print(
        f"\ndatabase faults: runs completed {len(finals)}/{len(run_ids)}, ingestion jobs retried "
        f"{len(retried)}, every ingestion job done {recovered_s:.1f} s after the restart; "
        f"{OUTAGE_S} s outage mid-ingestion: those jobs done {outage_recovered_s:.1f} s "
        "after the database came back"
    )


@pytest.mark.broker_matrix
def test_a_job_hung_inside_its_transaction_is_found_by_the_lost_job_sweep(
    fast: dict[str, str], fleet: Fleet, tmp_path: Path
) -> None:
    """The hung job holds its row; the server ends the idle transaction, and the sweep
    sees the job silent past its deadline and sends it to a healthy worker."""
    fast["LIFECYCLE_SWEEP_JOB_DEADLINE_S"] = json.dumps(
        {kind.value: 4 if kind is JobKind.INGEST_DOCUMENTS else 60 for kind in JobKind}
    )
    # Its process stops renewing the hung job's lease at that deadline; the lease lapses.
    fast["LIFECYCLE_SWEEP_JOB_LEASE_S"] = "4"
    fast["LIFECYCLE_JOB_HEARTBEAT_INTERVAL_S"] = "1"  # below the lease (the others' renewals)
    fleet.env.update(fast)
    fleet.start("orchestrator", concurrency=2)
    fleet.start("kb_index,analysis,reporting", concurrency=2)
    hung = fleet.start(
        "ingestion",
        pool="solo",
        concurrency=1,
        # Only the hung worker's sessions end after 3 s idle in a transaction: the other
        # workers' jobs may compute longer than that inside theirs (the catalogue).
        extra_env={
            "LIFECYCLE_HOLD_JOB_STEP": INGEST,
            "LIFECYCLE_DATABASE_IDLE_TRANSACTION_TIMEOUT_S": "3",
        },
        include=("orchestrator.testing.held_jobs",),
    )
    owner, reviewer = new_tenant()
    with beat(fleet, tmp_path):
        run_id = start_slow_run(owner)
        wait_for(
            lambda: jobs_running([run_id], INGEST) == 1,
            timeout_s=60,
            what="the ingestion job to start, and hang",
        )
        began = time.monotonic()
        fleet.start("ingestion", concurrency=2, extra_env=SLOW_READER_ENV)
        wait_for(
            lambda: _all_ingested([run_id]),
            timeout_s=90,
            what="the hung ingestion job to be sent to the healthy worker",
        )
        recovered_s = time.monotonic() - began
        final = Reviewers(reviewer).drive([run_id], timeout_s=180)[run_id]
    fleet.kill(hung)

    assert final.status == "completed"
    (job,) = _ingestion_jobs([run_id])
    # The sweep's re-dispatch, and maybe Redis giving the hung worker's message back
    # (this fleet's visibility timeout is 4 s): each found the job and did it once.
    assert job.deliveries >= 2
    assert step_counts(run_id)[("ingest_documents", "completed")] == 1
    assert dead_letters([run_id]) == 0
    print(
        f"\nhung job: run completed, ingestion done {recovered_s:.1f} s after it hung "
        "(idle transaction ended at 3 s, job deadline and lease 4 s)"
    )
