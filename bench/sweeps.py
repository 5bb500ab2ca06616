"""Sweep cost over 1,000 and over 100,000 runs with the same number due.

For each size, a fresh PostgreSQL database is filled (COPY) with history that exists but
is not due (completed runs, recent approval waits, live jobs, runs blocked and already
woken) plus, for each of R rounds one minute apart, D items of each kind that become due
in that round. The sweeps' cursors stand where a sweep one minute earlier left them. Then
the clock moves round by round and each sweep is timed once per round; the median is
printed per size, with the ratio between sizes. A sweep that costs what is due, not what
exists, keeps the ratio near 1.

    python -m bench.sweeps --database-url postgresql://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from bench.options import add_database_url
from bench.record import add_record_flag, record_if_asked
from orchestrator.config.settings import get_settings, reset_settings
from orchestrator.config.sweep_registry import SWEEPS as DECLARED
from orchestrator.config.sweeps import DAY
from orchestrator.contracts.clock import set_clock
from orchestrator.db.migrate import upgrade
from orchestrator.db.session import transaction
from orchestrator.runtime import registrations  # noqa: F401 (the sweeps' functions)
from orchestrator.testing.reset import reset_process_state

#: The run sweeps (the notification queue's are measured by bench.compare).
SWEEPS = {sweep.name: sweep.function() for sweep in DECLARED if sweep.queue == "orchestrator"}
START = datetime(2031, 3, 2, 12, 0, tzinfo=UTC)
ROUND = timedelta(seconds=60)
SOA_WAIT = "wait_for_soa_approval"


@dataclass
class Rows:
    """Rows to COPY into each table."""

    tables: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)

    def add(self, table: str, *row: Any) -> None:
        self.tables.setdefault(table, []).append(row)


COLUMNS = {
    "assessments": "id, tenant_id, organization_id, name, status, created_by, created_at",
    "workflow_runs": "id, assessment_id, active_assessment_id, tenant_id, organization_id, "
    "status, current_step, context, version, trace_id, started_by, "
    "start_idempotency_key, start_request_hash, created_at, updated_at",
    "step_executions": "run_id, step, attempt, status, started_at",
    "signal_inbox": "signal_id, run_id, type, idempotency_key, content_hash, envelope, fate, "
    "received_at",
    "outbox": "run_id, task_name, queue, task_id, body, created_at, published_at",
    "jobs": "id, run_id, step, step_attempt, kind, queue, status, deliveries, request, "
    "created_at, updated_at",
    "inbox_rekicks": "run_id, kicks, kicked_at, next_at, last_signal_id",
}


class Builder:
    """Makes runs with the rows a real run of that shape would have."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.rows = Rows()
        self.signal_ids = 0

    def run(
        self,
        status: str,
        step: str,
        created: datetime,
        updated: datetime,
        context: dict[str, Any] | None = None,
    ) -> uuid.UUID:
        run_id, assessment_id = uuid.uuid4(), uuid.uuid4()
        active = None if status in ("completed", "cancelled") else assessment_id
        self.rows.add(
            "assessments", assessment_id, "bench", "org", "Bench", "active", "user:bench", created
        )
        self.rows.add(
            "workflow_runs",
            run_id,
            assessment_id,
            active,
            "bench",
            "org",
            status,
            step,
            json.dumps(context or {}),
            3,
            "trace",
            "user:bench",
            f"start-{run_id}",
            "0" * 64,
            created,
            updated,
        )
        self.rows.add("step_executions", run_id, "validate_assessment", 1, "completed", created)
        self.signal(run_id, "applied", created)
        self.rows.add(
            "outbox",
            run_id,
            "ingestion.ingest_documents",
            "ingestion",
            f"{run_id}:ingest_documents:1",
            "{}",
            created,
            created,
        )
        return run_id

    def signal(self, run_id: uuid.UUID, fate: str, received: datetime) -> int:
        self.signal_ids += 1
        key = f"signal-{self.signal_ids}"
        self.rows.add(
            "signal_inbox",
            uuid.uuid4(),
            run_id,
            "assessment_resumed",
            key,
            hashlib.sha256(key.encode()).hexdigest(),
            "{}",
            fate,
            received,
        )
        return self.signal_ids

    def job(
        self,
        run_id: uuid.UUID,
        status: str,
        updated: datetime,
        step: str = "create_scope",
        kind: str = "analysis",
    ) -> None:
        job_id = f"{run_id}:{step}:1"
        request = {
            "job_id": job_id,
            "kind": kind,
            "run_id": str(run_id),
            "step": step,
            "attempt": 1,
        }
        self.rows.add(
            "jobs",
            job_id,
            run_id,
            step,
            1,
            kind,
            kind,
            status,
            1,
            json.dumps(request),
            updated,
            updated,
        )

    def between(self, earliest: datetime, latest: datetime) -> datetime:
        return earliest + (latest - earliest) * self.rng.random()


def history(builder: Builder, count: int, end: datetime) -> None:
    """What exists and is not due: the bulk of a large deployment."""
    b = builder
    for _ in range(count):
        kind = b.rng.random()
        if kind < 0.70:  # finished long ago
            created = b.between(START - timedelta(days=365), START - timedelta(days=40))
            b.run("completed", "close_assessment", created, created + timedelta(days=9))
        elif kind < 0.85:  # waiting for an approval, not for long
            opened = b.between(START - timedelta(hours=20), START - timedelta(hours=1))
            run_id = b.run(
                "waiting_for_approval",
                SOA_WAIT,
                opened - timedelta(days=1),
                opened,
                {"attempts": {SOA_WAIT: 1}},
            )
            b.rows.add("step_executions", run_id, SOA_WAIT, 1, "waiting", opened)
        elif kind < 0.95:  # a job running right now (deadline 1200 s: beyond the rounds)
            updated = b.between(START - timedelta(seconds=250), START)
            run_id = b.run("running", "index_kb", START - timedelta(days=2), updated)
            b.job(run_id, "started", updated, "index_kb", "index_kb")
        else:  # blocked, with a signal that waits for the resume; woken already
            created = b.between(START - timedelta(days=12), START - timedelta(days=2))
            run_id = b.run("blocked", "create_scope", created, created)
            signal = b.signal(run_id, "pending", created + timedelta(hours=1))
            b.rows.add("inbox_rekicks", run_id, 9, created, end + timedelta(hours=1), signal)


def due(builder: Builder, per_kind: int, rounds: int) -> None:
    """For each round, `per_kind` items of every kind that become due in that round."""
    b = builder
    grace = timedelta(seconds=get_settings().sweeps.grace_s)
    for r in range(1, rounds + 1):
        prev, now = START + (r - 1) * ROUND, START + r * ROUND
        for _ in range(per_kind):
            opened = b.between(prev, now) - timedelta(days=1)
            run_id = b.run(
                "waiting_for_approval",
                SOA_WAIT,
                opened - timedelta(hours=3),
                opened,
                {"attempts": {SOA_WAIT: 1}},
            )
            b.rows.add("step_executions", run_id, SOA_WAIT, 1, "waiting", opened)
            created = b.between(prev, now) - timedelta(days=30)
            b.run("waiting_for_input", "wait_for_documents", created, START - timedelta(days=1))
            idle = b.between(prev, now) - timedelta(days=14)
            b.run("waiting_for_input", "wait_for_documents", idle - timedelta(days=1), idle)
            quiet = b.between(prev, now) - timedelta(hours=1)
            b.job(
                b.run("running", "create_scope", START - timedelta(days=2), quiet), "queued", quiet
            )
            received = b.between(prev, now) - grace
            b.signal(
                b.run("running", "create_scope", START - timedelta(days=1), received),
                "pending",
                received,
            )
            run_id = b.run(
                "running", "ingest_documents", START - timedelta(days=1), START - timedelta(days=1)
            )
            b.rows.add(
                "outbox",
                run_id,
                "ingestion.ingest_documents",
                "ingestion",
                f"{run_id}:ingest_documents:2",
                "{}",
                received,
                None,
            )


def cursors() -> Iterator[tuple[str, datetime]]:
    """Where sweeps at START left their cursors."""
    settings = get_settings().sweeps
    policy = settings.approval_default
    for stage, after in (
        ("reminded", policy.remind_after_s),
        ("escalated", policy.escalate_after_s),
        ("approval_blocked", policy.block_after_s),
    ):
        for gate in (
            "wait_for_soa_approval",
            "wait_for_gap_approval",
            "wait_for_maturity_approval",
            "wait_for_poam_approval",
            "wait_for_report_approval",
        ):
            yield f"approval:{stage}:{gate}", START - timedelta(seconds=after)
    yield "sla", START - timedelta(seconds=settings.sla_s)
    yield "stale", START - timedelta(seconds=settings.stale_after_s)
    yield "inbox", START - settings.grace


def load(url: str, rows: Rows) -> None:
    engine = create_engine(url)
    raw = engine.raw_connection()
    connection: Any = raw.driver_connection
    with connection.cursor() as cursor:
        for table, columns in COLUMNS.items():
            with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows.tables.get(table, []):
                    copy.write_row(row)
        with cursor.copy(
            "COPY sweep_cursors (name, position, position_id, updated_at) FROM STDIN"
        ) as copy:
            for name, position in cursors():
                copy.write_row((name, position, "", START))
    connection.commit()
    connection.autocommit = True
    connection.execute("VACUUM ANALYZE")
    raw.close()
    engine.dispose()


Timings = dict[str, list[float]]
Handled = dict[str, list[int]]


def measure(urls: dict[int, str], rounds: int) -> dict[int, tuple[Timings, Handled]]:
    """Round by round, each size in turn: a busy machine slows both sizes alike."""
    results: dict[int, tuple[Timings, Handled]] = {
        size: ({name: [] for name in SWEEPS}, {name: [] for name in SWEEPS}) for size in urls
    }
    for r in range(1, rounds + 1):
        set_clock(frozen(START + r * ROUND))
        for size, url in urls.items():
            use_database(url)
            timings, handled = results[size]
            for name, sweep in SWEEPS.items():
                started = time.perf_counter()
                result = sweep()
                timings[name].append(time.perf_counter() - started)
                handled[name].append(items(name, result))
    set_clock(None)
    return results


def use_database(url: str) -> None:
    os.environ["LIFECYCLE_DATABASE_URL"] = url
    reset_settings()
    with transaction() as session:  # a warm connection, so no round pays for connecting
        session.execute(text("SELECT 1"))


def frozen(moment: datetime) -> Callable[[], datetime]:
    return lambda: moment


def items(name: str, result: Any) -> int:
    """How many items a sweep acted on (the inbox sweep also repeats earlier kicks)."""
    if name == "lost_jobs":
        return int(result.redispatched + result.dead_lettered)
    if name == "approval_waits":
        return int(sum(result.values()))
    return int(result)


def build(server_url: str, size: int, per_kind: int, rounds: int, seed: int) -> tuple[str, str]:
    due_runs = 6 * per_kind * rounds
    if size < due_runs:
        raise SystemExit(f"--due {per_kind} x {rounds} rounds needs at least {due_runs} runs")
    url, name = fresh_database(server_url)
    upgrade(url)
    builder = Builder(random.Random(seed))
    due(builder, per_kind, rounds)
    history(builder, size - due_runs, START + rounds * ROUND)
    started = time.perf_counter()
    load(url, builder.rows)
    print(f"  {size:>7} runs loaded in {time.perf_counter() - started:.1f} s")
    return url, name


def fresh_database(server_url: str) -> tuple[str, str]:
    server = make_url(server_url).set(drivername="postgresql+psycopg")
    name = f"lifecycle_bench_{uuid.uuid4().hex[:8]}"
    with create_engine(server, isolation_level="AUTOCOMMIT").connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    return server.set(database=name).render_as_string(hide_password=False), name


def drop_database(server_url: str, name: str) -> None:
    server = make_url(server_url).set(drivername="postgresql+psycopg")
    with create_engine(server, isolation_level="AUTOCOMMIT").connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def report(results: dict[int, tuple[Timings, Handled]]) -> list[float]:
    small, large = sorted(results)
    print(
        f"\n{'sweep':<16}{'items':>7}{small:>10} runs{large:>11} runs{'ratio':>8}"
        "   (median over rounds, ms)"
    )
    totals = [0.0, 0.0]
    for name in SWEEPS:
        a = statistics.median(results[small][0][name]) * 1000
        b = statistics.median(results[large][0][name]) * 1000
        totals = [totals[0] + a, totals[1] + b]
        same = results[small][1][name] == results[large][1][name]
        handled = statistics.median(results[large][1][name])
        print(
            f"{name:<16}{handled:>7g}{a:>15.1f}{b:>16.1f}{b / a:>8.2f}"
            f"{'' if same else '  (items differ between sizes!)'}"
        )
    print(f"{'all sweeps':<23}{totals[0]:>15.1f}{totals[1]:>16.1f}{totals[1] / totals[0]:>8.2f}")
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_database_url(parser)
    parser.add_argument("--sizes", type=int, nargs=2, default=[1_000, 100_000])
    parser.add_argument("--due", type=int, default=15, help="items of each kind per round")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--seed", type=int, default=7)
    add_record_flag(parser)
    args = parser.parse_args()
    os.environ["LIFECYCLE_BROKER_URL"] = "memory://localhost/"  # messages stay in process
    os.environ["LIFECYCLE_HOME"] = tempfile.mkdtemp(prefix="sweep-bench-")
    print(
        f"sweeps over {args.sizes[0]} and {args.sizes[1]} runs; {args.due} due per kind "
        f"per round, {args.rounds} rounds; defaults: approval remind after "
        f"{get_settings().sweeps.approval_default.remind_after_s / DAY:g} d"
    )
    databases = {
        size: build(args.database_url, size, args.due, args.rounds, args.seed)
        for size in args.sizes
    }
    try:
        totals = report(measure({size: url for size, (url, _) in databases.items()}, args.rounds))
        small, large = args.sizes
        record_if_asked(
            args,
            "sweeps",
            [
                (f"all sweeps, {large:,} runs / {small:,} runs", totals[1] / totals[0], "x"),
                (f"all sweeps, {small:,} runs", totals[0], "ms"),
                (f"all sweeps, {large:,} runs", totals[1], "ms"),
            ],
        )
    finally:
        reset_process_state()
        for _, name in databases.values():
            drop_database(args.database_url, name)


if __name__ == "__main__":
    main()
