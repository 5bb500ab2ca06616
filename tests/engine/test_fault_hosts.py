"""The fleet as separate hosts (network namespaces on one bridge, tests/support/hosts.py):
a database+broker host, an API host, a coordinator host, beat, and two worker hosts.

Three faults, each while jobs are in flight: a worker host is killed (every process at
once); a worker host is cut off the network for longer than its job's lease and its
kind's deadline, then restored, so its late result arrives after another host did the
job; the database+broker host restarts both servers. Every run completes, each step once,
each chunk once, and nothing is dead-lettered. And a host cut off inside a transaction
does not keep its row locks: the server gives the silent peer up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import select, text

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.jobs import JobKind, JobStatus
from orchestrator.contracts.steps import STEP_ORDER
from orchestrator.db.models import Document, Job, WorkflowRun
from orchestrator.db.session import make_engine, transaction
from orchestrator.testing.worker_processes import ROOT
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.api.conftest import Api
from tests.support.faults import (
    FAST_SWEEPS,
    SLOW_READER_ENV,
    Reviewers,
    beat,
    dead_letters,
    start_slow_run,
    unrecoverable,
)
from tests.support.fleet_runs import audit_counts, chunk_count, new_tenant, step_counts
from tests.support.hosts import Host, Network, network
from tests.support.polling import poll, scaled, wait_for
from tests.support.private_services import PrivatePostgres, PrivateRedis

pytestmark = [pytest.mark.integration, pytest.mark.multihost]
ROLES = ("db", "api", "coordinator", "beat", "worker-1", "worker-2")
JOB_QUEUES = "ingestion,kb_index,analysis,reporting"
INGEST = "ingest_documents"
#: A started job holds a 6 s lease, renewed every second by its worker; an ingestion job is
#: given up on 15 s after it started. Slow documents keep each ingestion job busy 4 s.
HOSTS_ENV = {
    **FAST_SWEEPS,
    "LIFECYCLE_SWEEP_JOB_LEASE_S": "6",
    "LIFECYCLE_JOB_HEARTBEAT_INTERVAL_S": "1",
    # The cut host's open transactions and their row locks are given up by the server.
    "LIFECYCLE_DATABASE_DEAD_PEER_S": "10",
    "LIFECYCLE_SWEEP_JOB_DEADLINE_S": json.dumps(
        {kind.value: 15 if kind is JobKind.INGEST_DOCUMENTS else 120 for kind in JobKind}
    ),
    **SLOW_READER_ENV,
    "LIFECYCLE_TEST_SLOW_PARSE_S": "4",
}
#: How long the worker host stays cut off: past its job's lease and its kind's deadline.
CUT_S = 20


@pytest.fixture(scope="module")
def hosts(services: tuple[str, str]) -> Iterator[Network]:
    with network(ROLES) as made:
        yield made


@pytest.fixture(scope="module")
def db_postgres(hosts: Network) -> Iterator[PrivatePostgres]:
    db = hosts["db"]
    cluster = PrivatePostgres(address=db.address, network=hosts.subnet, host=db.run)
    try:
        cluster.create()
        yield cluster
    finally:
        cluster.drop()


@pytest.fixture(scope="module")
def db_redis(hosts: Network, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRedis]:
    db = hosts["db"]
    server = PrivateRedis(tmp_path_factory.mktemp("redis"), address=db.address, host=db.run)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def postgres_url(db_postgres: PrivatePostgres) -> str:
    """Every process of this module reaches the database on the db host."""
    return db_postgres.url


@pytest.fixture
def broker_url(db_redis: PrivateRedis) -> str:
    return db_redis.url


@pytest.fixture
def hosts_env(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, value in HOSTS_ENV.items():
        monkeypatch.setenv(name, value)
    fleet.env.update(HOSTS_ENV)
    reset_settings()
    yield
    reset_settings()


@contextmanager
def api_host(fleet: Fleet, host: Host, log_dir: Path) -> Iterator[Api]:
    """`uvicorn orchestrator.api:app` on the API host, and a client of it from this one."""
    base = f"http://{host.address}:8000"
    with (log_dir / "api.log").open("ab") as log:
        process = subprocess.Popen(
            [*host.run, sys.executable, "-m", "uvicorn", "orchestrator.api:app"]
            + ["--host", host.address, "--port", "8000", "--no-access-log"],
            cwd=ROOT,
            env=fleet.env,
            stdout=log,
            stderr=log,
        )
    try:
        wait_for(lambda: _serves(base) or process.poll() is not None, what="the API host")
        assert process.poll() is None, (log_dir / "api.log").read_text()
        with httpx2.Client(base_url=base, timeout=scaled(30)) as client:
            yield Api(client)  # type: ignore[arg-type]
    finally:
        process.terminate()
        process.wait(timeout=scaled(20))


def _serves(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=scaled(2)) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _start_over_http(api: Api, headers: dict[str, str], count: int) -> list[uuid.UUID]:
    runs = []
    for index in range(count):
        assessment = api.create_assessment(headers, "org-1", f"Across hosts {index}")["id"]
        api.upload_samples(headers, assessment)
        started = api.start(headers, assessment, f"start-{assessment}")
        assert started.status_code == 201, started.text
        runs.append(uuid.UUID(started.json()["id"]))
    return runs


def _job(job_id: str) -> Job:
    with transaction() as session:
        job = session.get(Job, job_id)
        assert job is not None, job_id
        session.expunge(job)
        return job


def _started_on(fleet: Fleet, worker: str, run_ids: list[uuid.UUID]) -> str | None:
    """An ingestion job of `run_ids` that `worker` is running now (its log says it took
    the job, the job's row says started)."""
    log = fleet.log_of(worker)
    for run_id in run_ids:
        job_id = f"{run_id}:{INGEST}:1"
        if f'"task_id": "{job_id}"' in log and _job_status(job_id) == "started":
            return job_id
    return None


#: Slow runs whose ingestion has not ended, kept going while a host's job is awaited.
SLOW_IN_FLIGHT = 4
#: At most this many slow runs are started to catch one job on a given host.
SLOW_AT_MOST = 16


def _caught_running_on(
    fleet: Fleet, worker: str, owner: Actor, reviewers: Reviewers, run_ids: list[uuid.UUID]
) -> str:
    """Start slow runs until one of their ingestion jobs is seen running on `worker` (its id).
    Which worker takes a job is the broker's choice, and a job can end between two looks on
    a loaded machine, so more slow runs are started (added to `run_ids`) while none is."""
    slow: list[uuid.UUID] = []

    def observe() -> str | None:
        reviewers.step(run_ids)
        caught = _started_on(fleet, worker, slow)
        if caught is None and len(slow) < SLOW_AT_MOST:
            ended = (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)
            in_flight = [r for r in slow if _job_status(f"{r}:{INGEST}:1") not in ended]
            for _ in range(SLOW_IN_FLIGHT - len(in_flight)):
                slow.append(start_slow_run(owner))
                run_ids.append(slow[-1])
        return caught

    caught = poll(observe, bool, timeout_s=120, what=f"{worker} running an ingestion job")
    assert caught is not None
    return caught


def _job_status(job_id: str) -> str | None:
    with transaction() as session:
        return session.scalar(select(Job.status).where(Job.id == job_id))


def _while_reviewing(
    reviewers: Reviewers, run_ids: list[uuid.UUID], look: Callable[[], Any]
) -> Callable[[], Any]:
    """`look`, after one look at every run by the reviewers (the others go on meanwhile)."""

    def observe() -> Any:
        reviewers.step(run_ids)
        return look()

    return observe


def test_the_fleet_across_hosts_survives_a_killed_host_a_cut_host_and_a_restarted_db_host(
    hosts: Network,
    db_postgres: PrivatePostgres,
    db_redis: PrivateRedis,
    hosts_env: None,
    fleet: Fleet,
    tmp_path: Path,
) -> None:
    fleet.start("orchestrator", concurrency=2, host=hosts["coordinator"].run)
    first = fleet.start(JOB_QUEUES, concurrency=2, host=hosts["worker-1"].run)
    fleet.start(JOB_QUEUES, concurrency=2, host=hosts["worker-2"].run)
    owner, reviewer = new_tenant()
    reviewers = Reviewers(reviewer)
    with (
        beat(fleet, tmp_path, host=hosts["beat"].run) as scheduler,
        api_host(fleet, hosts["api"], tmp_path) as api,
    ):
        headers = api.key("signal", "read", tenant=owner.tenant_id, principal=owner.actor_id)
        run_ids = _start_over_http(api, headers, 2)

        # 1. worker-1's host dies while it runs an ingestion job.
        killed_job = _caught_running_on(fleet, first, owner, reviewers, run_ids)
        assert hosts.kill(hosts["worker-1"]), "the host had processes"
        fleet.kill(first)  # reaps it
        poll(
            _while_reviewing(reviewers, run_ids, lambda: _job_status(killed_job)),
            lambda status: status == "succeeded",
            timeout_s=120,
            what="the killed host's job done by worker-2",
        )
        rebooted = fleet.start(JOB_QUEUES, concurrency=2, host=hosts["worker-1"].run)

        # 2. worker-1's host is cut off mid-job for longer than the job's lease and deadline.
        cut_job = _caught_running_on(fleet, rebooted, owner, reviewers, run_ids)
        hosts.cut(hosts["worker-1"])
        cut_at = time.monotonic()
        try:
            poll(
                _while_reviewing(reviewers, run_ids, lambda: _job_status(cut_job)),
                lambda status: status == "succeeded",
                timeout_s=120,
                what="the cut-off host's job done by worker-2",
            )
            # The rest of the outage itself: nothing is being waited for.
            time.sleep(max(0.0, CUT_S - (time.monotonic() - cut_at)))
        finally:
            hosts.restore(hosts["worker-1"])
        wait_for(
            lambda: f"[{cut_job}] " in _ends(fleet.log_of(rebooted)),
            timeout_s=120,
            what="the restored host's late delivery of the job to end",
        )

        # 3. The database+broker host restarts both servers while jobs run.
        later = _start_over_http(api, headers, 2)
        run_ids += later
        poll(
            _while_reviewing(
                reviewers, run_ids, lambda: any(_job_status(f"{r}:{INGEST}:1") for r in later)
            ),
            bool,
            timeout_s=60,
            what="the last runs' jobs to be dispatched",
        )
        db_redis.restart()
        db_postgres.restart()

        finals = reviewers.drive(run_ids, timeout_s=300)
        assert scheduler.poll() is None, "celery beat exited"

    assert not unrecoverable(fleet), [fleet.log_of(n)[-3000:] for n in unrecoverable(fleet)]
    assert {run.status for run in finals.values()} == {"completed"}, finals
    assert dead_letters(run_ids) == 0
    for run_id in run_ids:
        assert step_counts(run_id) == {(step.value, "completed"): 1 for step in STEP_ORDER}
    assert _job(killed_job).deliveries >= 2 and _job(cut_job).deliveries >= 2
    redispatched = AuditEventType.LIFECYCLE_WORKFLOW_JOB_REDISPATCHED.value
    # Sent again once at most: by the lost-job sweep, unless the broker's re-delivery of the
    # cut host's unacknowledged message reached worker-2 first.
    assert audit_counts(uuid.UUID(cut_job.split(":")[0]))[(redispatched, INGEST)] <= 1
    # The slow runs read the same documents: the killed host's and the cut host's runs
    # (each job done twice, the late result refused) have the chunks of every other.
    slow_chunks = {r: chunk_count(_assessment_of(r)) for r in run_ids if _is_slow(r)}
    assert len(set(slow_chunks.values())) == 1, slow_chunks
    print(
        f"\nacross {len(ROLES)} hosts: {len(finals)} runs completed; killed host's job "
        f"delivered {_job(killed_job).deliveries}x, cut host's {_job(cut_job).deliveries}x; "
        f"cut off {CUT_S} s"
    )


def _ends(log: str) -> str:
    """The log lines of task ends (celery.app.trace: succeeded, raised, ignored, revoked,
    or given back to be retried: a database call cut short by the outage; or rejected: the
    retry could not be sent while the host was still cut off, so the lost-job sweep owns
    the job)."""
    ends = ("succeeded in", "raised", "ignored", "revoked", "retry: Retry in", "reject requeue")
    return "\n".join(line for line in log.splitlines() if any(end in line for end in ends))


def _assessment_of(run_id: uuid.UUID) -> uuid.UUID:
    with transaction() as session:
        run = session.get(WorkflowRun, run_id)
        assert run is not None
        return run.assessment_id


def _is_slow(run_id: uuid.UUID) -> bool:
    with transaction() as session:
        names = session.scalars(
            select(Document.filename).where(Document.assessment_id == _assessment_of(run_id))
        ).all()
    return "slow.md" in names


#: On a worker host: hold a row lock inside an open transaction, then wait for ever.
HOLD_LOCK = """
import sys, threading
from sqlalchemy import text
from orchestrator.db.session import make_engine
connection = make_engine(sys.argv[1]).connect()
connection.execute(text("SELECT id FROM lock_probe WHERE id = 1 FOR UPDATE"))
print("locked", flush=True)
threading.Event().wait()
"""


def test_a_cut_hosts_locks_are_freed_by_the_server(
    hosts: Network, db_postgres: PrivatePostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host cut off the network mid-transaction: the server gives its session up once the
    peer stays silent (LIFECYCLE_DATABASE_DEAD_PEER_S), so its row lock is freed for the
    others long before the idle-in-transaction timeout (20 min) would."""
    url = db_postgres.url
    with make_engine(url).begin() as connection:
        connection.execute(text("CREATE TABLE IF NOT EXISTS lock_probe (id int PRIMARY KEY)"))
        connection.execute(text("INSERT INTO lock_probe VALUES (1) ON CONFLICT DO NOTHING"))
    host = hosts["worker-2"]
    env = {**os.environ, "LIFECYCLE_DATABASE_DEAD_PEER_S": "6", "LIFECYCLE_DATABASE_URL": url}
    holder = subprocess.Popen(
        [*host.run, sys.executable, "-c", HOLD_LOCK, url],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        hosts.cut(host)
        try:
            with make_engine(url).begin() as connection:
                # Far above the 6 s the server waits for the silent host, far below 20 min.
                connection.execute(text(f"SET LOCAL lock_timeout = '{int(scaled(60))}s'"))
                got = connection.execute(
                    text("SELECT id FROM lock_probe WHERE id = 1 FOR UPDATE")
                ).scalar()
            assert got == 1
        finally:
            hosts.restore(host)
    finally:
        holder.kill()
        holder.wait()
