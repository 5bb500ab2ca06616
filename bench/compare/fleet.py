"""Phase 2, the fleet: N lifecycles at once through all 20 steps, instant jobs, real
worker processes (a coordinator and a job worker, SQL counted in both)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kombu import Connection
from sqlalchemy import func, select

from bench.compare import sqlcount
from bench.compare.db import DbWatch, drop_database, fresh_database
from bench.compare.driver import WaitAnswerer, create_assessments, drive, new_owner, start_runs
from bench.compare.latency import fleet_latencies
from bench.compare.procs import broker_cpu_s, cpu_s, own_cpu_s, peak_rss_of
from bench.compare.results import PhaseResult, RoundFigures
from bench.compare.workers import BenchWorkers
from orchestrator.db.migrate import upgrade
from orchestrator.db.models import InboxSignal, StepExecution, WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.engine.broker_topology import is_amqp
from orchestrator.testing.empty_broker import empty_broker
from orchestrator.testing.reset import reset_process_state

JOB_QUEUES = "ingestion,kb_index,analysis,reporting"
WORKER_ROLES = ("coordinator", "jobs")


@dataclass(frozen=True)
class FleetOptions:
    server_url: str
    broker_url: str
    coordinator_concurrency: int = 8
    job_concurrency: int = 2
    poll_s: float = 0.005
    timeout_s: float = 600.0


class Fleet:
    """A fresh database, a flushed broker, a coordinator and a job worker."""

    def __init__(self, options: FleetOptions) -> None:
        self.options = options
        self.home = Path(tempfile.mkdtemp(prefix="lifecycle-compare-"))
        self.count_dir = self.home / "sqlcount"
        self.url, self.database = fresh_database(options.server_url, "lifecycle_compare")
        self.watch = DbWatch(options.server_url, self.database)
        self.env = {
            "LIFECYCLE_DATABASE_URL": self.url,
            "LIFECYCLE_BROKER_URL": options.broker_url,
            "LIFECYCLE_HOME": str(self.home),
            sqlcount.ENABLED_ENV: "1",
            sqlcount.DIR_ENV: str(self.count_dir),
        }
        self.workers = BenchWorkers(self.env, self.home / "logs")
        self.names: dict[str, str] = {}

    @property
    def scheme(self) -> str:
        return "amqp" if is_amqp(self.options.broker_url) else "redis"

    def __enter__(self) -> Fleet:
        try:
            empty_broker(self.options.broker_url)
            os.environ.update(self.env)
            reset_process_state()
            upgrade(self.url)
            sqlcount.install_if_enabled()
            self.workers.__enter__()
            self.names["coordinator"] = self.workers.start_app(
                "bench.compare.sqlcount_app",
                "orchestrator",
                role="coordinator",
                concurrency=self.options.coordinator_concurrency,
            )
            self.names["jobs"] = self.workers.start_app(
                "bench.compare.sqlcount_app",
                JOB_QUEUES,
                role="jobs",
                concurrency=self.options.job_concurrency,
                # Jobs skip their work: the comparison measures the orchestration.
                include=("orchestrator.testing.instant_worker",),
            )
        except BaseException as error:
            self.__exit__(type(error))  # no database or worker left behind
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            self.workers.__exit__()
        finally:
            reset_process_state()
            self.watch.dispose()
            drop_database(self.options.server_url, self.database)
        if kind is None:
            shutil.rmtree(self.home, ignore_errors=True)
        else:
            print(f"fleet worker logs kept in {self.home / 'logs'}", file=sys.stderr)

    def activate(self) -> None:
        """Point this process (the driver, the sweeps it calls) at this fleet's database and
        broker: two fleets may run side by side, their rounds alternated."""
        os.environ.update(self.env)
        reset_process_state()

    def pids(self) -> dict[str, int]:
        return {role: self.workers.pid(name) for role, name in self.names.items()}

    def peak_rss(self) -> dict[str, float]:
        return peak_rss_of(self.pids())

    def sql(self, role: str) -> Counter[str]:
        return Counter(sqlcount.read_counts(self.count_dir, role)["totals"])

    def statements(self, role: str) -> Counter[str]:
        return Counter(sqlcount.read_counts(self.count_dir, role)["statements"])

    def round(self, runs: int, label: str) -> RoundFigures:
        self.activate()
        owner = new_owner(label)
        assessments = create_assessments(owner, runs)
        answerer = WaitAnswerer(owner)
        before = _Meters.read(self)
        began = time.perf_counter()
        run_ids = start_runs(owner, assessments)
        drive(answerer, runs, self.options.poll_s, self.options.timeout_s)
        elapsed = time.perf_counter() - began
        driver = Counter(sqlcount.snapshot()["totals"])
        time.sleep(0.6)  # trailing wake-ups finish; the counters' files catch up
        after = _Meters.read(self, driver)
        figures = _figures_of(run_ids, elapsed, sqlcount.read_publishes(self.count_dir))
        after.fill(before, figures)
        figures.extra["driver_polls"] = answerer.polls
        return figures


def rabbitmq_version(url: str) -> str:
    with Connection(url, connect_timeout=10) as connection:
        connection.ensure_connection(max_retries=1)
        properties = connection.connection.server_properties
    return str(properties.get("version", "?"))


def _figures_of(
    run_ids: list[uuid.UUID], elapsed: float, published: dict[str, float]
) -> RoundFigures:
    with transaction() as session:
        completed = (
            session.scalar(
                select(func.count())
                .select_from(WorkflowRun)
                .where(WorkflowRun.id.in_(run_ids), WorkflowRun.status == "completed")
            )
            or 0
        )
        steps = (
            session.scalar(
                select(func.count())
                .select_from(StepExecution)
                .where(StepExecution.run_id.in_(run_ids))
            )
            or 0
        )
        applied = (
            session.scalar(
                select(func.count())
                .select_from(InboxSignal)
                .where(InboxSignal.run_id.in_(run_ids), InboxSignal.fate == "applied")
            )
            or 0
        )
        dispatch, decide = fleet_latencies(session, run_ids, published)
    return RoundFigures(
        lifecycles=completed,
        transitions=steps,
        elapsed_s=elapsed,
        latencies_ms=dispatch,
        signals=applied,
        extra={
            "decide_ms": decide,
            "runs": len(run_ids),
            "publish_after_decide_ms": [d - w for d, w in zip(dispatch, decide, strict=True)],
        },
    )


COORDINATE = "coordinate"


def _scoped(counts: Counter[str], separator: str) -> Counter[str]:
    """The keys counted inside coordinator calls, without their prefix."""
    prefix = f"{COORDINATE}{separator}"
    return Counter({k[len(prefix) :]: n for k, n in counts.items() if k.startswith(prefix)})


def _unscoped(counts: Counter[str]) -> Counter[str]:
    return Counter({k: n for k, n in counts.items() if not k.startswith(COORDINATE)})


@dataclass
class _Meters:
    """Counters and CPU clocks read at the start and the end of a round."""

    sql: dict[str, Counter[str]]
    statements: Counter[str]
    worker_cpu: float
    driver_cpu: float
    database_cpu: float
    broker_cpu: float
    wal: int

    @classmethod
    def read(cls, fleet: Fleet, driver: Counter[str] | None = None) -> _Meters:
        sql = {role: fleet.sql(role) for role in WORKER_ROLES}
        sql["driver"] = driver if driver is not None else Counter(sqlcount.snapshot()["totals"])
        statements: Counter[str] = Counter()
        for role in WORKER_ROLES:
            statements.update(_scoped(fleet.statements(role), ": "))
        return cls(
            sql,
            statements,
            sum(cpu_s(pid) for pid in fleet.pids().values()),
            own_cpu_s(),
            fleet.watch.backend_cpu_s(),
            broker_cpu_s(fleet.scheme),
            fleet.watch.wal_position(),
        )

    def fill(self, before: _Meters, figures: RoundFigures) -> None:
        delta = {role: self.sql[role] - before.sql[role] for role in self.sql}
        for counts in delta.values():
            # The coordinator's side: every coordinator call, in the coordinator's worker
            # or in a job worker applying its own outcome.
            figures.orchestrator_sql.update(_scoped(counts, "."))
            figures.all_sql.update(_unscoped(counts))
            figures.extra.setdefault("tasks", Counter()).update(
                {k: n for k, n in counts.items() if k.startswith("task:")}
            )
        figures.statements = self.statements - before.statements
        figures.messages = sum(figures.extra["tasks"].values())
        figures.worker_cpu_s = self.worker_cpu - before.worker_cpu
        figures.driver_cpu_s = self.driver_cpu - before.driver_cpu
        figures.database_cpu_s = self.database_cpu - before.database_cpu
        figures.broker_cpu_s = self.broker_cpu - before.broker_cpu
        figures.extra["wal_bytes"] = self.wal - before.wal


def run_fleet(
    fleet: Fleet, runs: int, repeat: int, label: str = "fleet", warmup: int = 0
) -> PhaseResult:
    for i in range(warmup):  # imports, pools, compiled statements: not what is compared
        fleet.round(runs, f"{label}-warmup{i}")
    rounds = [fleet.round(runs, f"{label}{i}") for i in range(repeat)]
    return PhaseResult.of(label, rounds, fleet.peak_rss())
