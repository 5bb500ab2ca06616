"""Phase 3, the peer: DBOS Transact running the lifecycle's shape (bench.compare.peer_app) in two
worker processes on its own fresh PostgreSQL database, driven like the fleet: N workflows
enqueued at once, each wait answered (DBOSClient.send) as soon as its event appears. The fair
peer is the same with each step writing what the fleet writes (bench.compare.peer_writes)."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from dbos import DBOS, DBOSClient, SQLAlchemyDatasource
from sqlalchemy import create_engine, text

from bench.compare import sqlcount
from bench.compare.db import DbWatch, drop_database, fresh_database
from bench.compare.latency import job_to_job_pairs
from bench.compare.peer_app import QUEUE_NAME, SHAPE, WAIT_EVENT, WORKFLOW_NAME
from bench.compare.peer_writes import TABLES
from bench.compare.procs import cpu_s, own_cpu_s
from bench.compare.results import RoundFigures
from orchestrator.contracts.steps import STEP_ORDER, StepKind
from orchestrator.lifecycle.definition import STEP_SPECS
from orchestrator.testing.worker_processes import ROOT

#: The events that move a lifecycle, as the fleet counts applied signals: the start,
#: each job step's completion, each external message.
SIGNALS_PER_LIFECYCLE = (
    1
    + sum(1 for step in STEP_ORDER if STEP_SPECS[step].kind is StepKind.JOB)
    + sum(1 for _, waits in SHAPE if waits)
)


class Peer:
    def __init__(
        self,
        server_url: str,
        processes: int,
        runs: int,
        poll_s: float,
        queue_poll_s: float,
        fair: bool = False,
    ) -> None:
        self.fair = fair
        self.role = "fair_peer" if fair else "peer"
        self.server_url = server_url
        self.processes = processes
        self.runs = runs
        self.poll_s = poll_s
        self.queue_poll_s = queue_poll_s
        self.home = Path(tempfile.mkdtemp(prefix="lifecycle-peer-"))
        self.count_dir = self.home / "sqlcount"
        self.url, self.database = fresh_database(server_url, f"lifecycle_{self.role}")
        self.watch = DbWatch(server_url, self.database)
        self.workers: list[subprocess.Popen[bytes]] = []
        self.client: DBOSClient | None = None
        self.engine = create_engine(self.url)

    def __enter__(self) -> Peer:
        try:
            self._start()
        except BaseException as error:
            self.__exit__(type(error))  # no database or worker left behind
            raise
        return self

    def _start(self) -> None:
        DBOS.migrate(self.url)
        if self.fair:
            with self.engine.begin() as connection:
                connection.exec_driver_sql(TABLES)
            SQLAlchemyDatasource.migrate(self.url)
        env = {
            **os.environ,
            sqlcount.ENABLED_ENV: "1",
            sqlcount.DIR_ENV: str(self.count_dir),
            sqlcount.ROLE_ENV: self.role,
        }
        per_process = math.ceil(self.runs / self.processes)
        for i in range(self.processes):
            ready = self.home / f"ready-{i}"
            log = (self.home / f"peer-{i}.log").open("ab")
            self.workers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "bench.compare.peer_app",
                        "--url",
                        self.url,
                        "--executor-id",
                        f"peer-{i}",
                        "--worker-concurrency",
                        str(per_process),
                        "--poll-s",
                        str(self.queue_poll_s),
                        "--ready-file",
                        str(ready),
                        *(["--fair"] if self.fair else []),
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=log,
                )
            )
            _await_file(ready, self.workers[-1], self.home / f"peer-{i}.log")
        self.client = DBOSClient(system_database_url=self.url)

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            if self.client is not None:
                self.client.destroy()
            for worker in self.workers:
                worker.terminate()
            for worker in self.workers:
                try:
                    worker.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    worker.kill()
                    worker.wait(timeout=10)
        finally:
            self.engine.dispose()
            self.watch.dispose()
            drop_database(self.server_url, self.database)
        if kind is None:
            shutil.rmtree(self.home, ignore_errors=True)
        else:
            print(f"{self.role} worker logs kept in {self.home}", file=sys.stderr)

    def pids(self) -> dict[str, int]:
        return {f"{self.role}-{i}": w.pid for i, w in enumerate(self.workers)}

    def round(self, runs: int, label: str) -> RoundFigures:
        assert self.client is not None
        worker_sql = Counter(sqlcount.read_counts(self.count_dir, self.role)["totals"])
        statements = Counter(sqlcount.read_counts(self.count_dir, self.role)["statements"])
        driver_sql = Counter(sqlcount.snapshot()["totals"])
        cpu = {name: cpu_s(pid) for name, pid in self.pids().items()}
        driver_cpu, database_cpu = own_cpu_s(), self.watch.backend_cpu_s()
        began = time.perf_counter()
        for i in range(runs):
            self.client.enqueue(
                {
                    "workflow_name": WORKFLOW_NAME,
                    "queue_name": QUEUE_NAME,
                    "workflow_id": f"{label}-{i}",
                },
                i,
            )
        polls = self._drive(label, runs)
        elapsed = time.perf_counter() - began
        driver_delta = Counter(sqlcount.snapshot()["totals"]) - driver_sql
        time.sleep(0.6)
        worker_now = Counter(sqlcount.read_counts(self.count_dir, self.role)["totals"])
        worker_delta = worker_now - worker_sql
        completed, latencies = self._outcome(label)
        figures = RoundFigures(
            lifecycles=completed,
            transitions=completed * len(SHAPE),
            elapsed_s=elapsed,
            latencies_ms=latencies,
            signals=completed * SIGNALS_PER_LIFECYCLE,
            orchestrator_sql=worker_delta,
            all_sql=worker_delta + driver_delta,
            statements=Counter(sqlcount.read_counts(self.count_dir, self.role)["statements"])
            - statements,
            worker_cpu_s=sum(cpu_s(pid) - cpu[name] for name, pid in self.pids().items()),
            driver_cpu_s=own_cpu_s() - driver_cpu,
            database_cpu_s=self.watch.backend_cpu_s() - database_cpu,
            extra={"driver_polls": polls},
        )
        return figures

    def _drive(self, label: str, runs: int) -> int:
        assert self.client is not None
        answered: set[tuple[str, str]] = set()
        deadline = time.monotonic() + 600
        polls = 0
        while True:
            polls += 1
            with self.engine.begin() as connection:
                waits = connection.execute(
                    text(
                        "SELECT workflow_uuid, key FROM dbos.workflow_events "
                        "WHERE workflow_uuid LIKE :label AND key LIKE :wait"
                    ),
                    {"label": f"{label}-%", "wait": f"{WAIT_EVENT}%"},
                ).all()
                finished = connection.scalar(
                    text(
                        "SELECT count(*) FROM dbos.workflow_status WHERE workflow_uuid LIKE :label "
                        "AND status IN ('SUCCESS', 'ERROR', 'CANCELLED')"
                    ),
                    {"label": f"{label}-%"},
                )
            fresh = [(w, k) for w, k in waits if (w, k) not in answered]
            for workflow_id, key in fresh:
                answered.add((workflow_id, key))
                self.client.send(workflow_id, True, topic=key[len(WAIT_EVENT) :])
            if (finished or 0) >= runs:
                return polls
            if time.monotonic() > deadline:
                raise TimeoutError(f"peer: {runs - (finished or 0)} of {runs} unfinished")
            if not fresh:
                time.sleep(self.poll_s)

    def _outcome(self, label: str) -> tuple[int, list[float]]:
        with self.engine.begin() as connection:
            completed = (
                connection.scalar(
                    text(
                        "SELECT count(*) FROM dbos.workflow_status WHERE workflow_uuid LIKE :label "
                        "AND status = 'SUCCESS'"
                    ),
                    {"label": f"{label}-%"},
                )
                or 0
            )
            rows = connection.execute(
                text(
                    "SELECT workflow_uuid, function_name, started_at_epoch_ms, "
                    "completed_at_epoch_ms FROM dbos.operation_outputs "
                    "WHERE workflow_uuid LIKE :label"
                ),
                {"label": f"{label}-%"},
            ).all()
        steps = {(w, name): (started, done) for w, name, started, done in rows}
        latencies = []
        for first, second in job_to_job_pairs():
            a, b = STEP_ORDER[first].value, STEP_ORDER[second].value
            for (workflow_id, name), (_, done) in steps.items():
                following = steps.get((workflow_id, b))
                if name == a and done is not None and following and following[0] is not None:
                    latencies.append(float(following[0] - done))
        return completed, latencies


def _await_file(path: Path, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        if process.poll() is not None:
            raise RuntimeError(f"peer worker exited: {log.read_text(errors='replace')[-2000:]}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"peer worker not ready: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.05)
