"""Lifecycle throughput on PostgreSQL + Redis with instant jobs.

Starts real worker processes, runs N assessments through all 20 steps at once with a
scripted reviewer answering every wait as soon as it opens, and prints lifecycles/s and
transitions/s (step executions started per second).

    python bench/throughput.py --runs 50 \
        --database-url postgresql://postgres@127.0.0.1:5432/test \
        --broker-url redis://127.0.0.1:6379/14
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.db.migrate import upgrade  # noqa: E402
from orchestrator.db.models import InboxSignal, StepExecution, WorkflowRun  # noqa: E402
from orchestrator.db.session import transaction  # noqa: E402
from orchestrator.producer import Actor, create_assessment, start_lifecycle  # noqa: E402
from orchestrator.reset import reset_process_state  # noqa: E402
from orchestrator.reviewer import ScriptedReviewer  # noqa: E402
from orchestrator.views import RunView  # noqa: E402
from orchestrator.worker_processes import WorkerProcesses  # noqa: E402


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


def drive_all(reviewer: ScriptedReviewer, run_ids: list[uuid.UUID], timeout_s: float) -> None:
    """One reviewer follows every run, answering waits as soon as they open."""
    deadline = time.monotonic() + timeout_s
    open_runs = set(run_ids)
    while open_runs:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(open_runs)} runs unfinished")
        with transaction() as session:
            rows = list(session.scalars(select(WorkflowRun).where(WorkflowRun.id.in_(open_runs))))
        answered = False
        for row in rows:
            if row.status in ("completed", "cancelled", "failed", "blocked"):
                open_runs.discard(row.id)
                continue
            answered |= reviewer.answer(RunView.of(row))
        if not answered:
            time.sleep(0.005)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database-url", default=os.environ.get(
        "LIFECYCLE_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--broker-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--orchestrator-concurrency", type=int, default=2)
    parser.add_argument("--job-concurrency", type=int, default=2)
    args = parser.parse_args()

    url, name = fresh_database(args.database_url)
    redis.Redis.from_url(args.broker_url).flushdb()
    home = Path(tempfile.mkdtemp(prefix="lifecycle-bench-"))
    env = {"LIFECYCLE_DATABASE_URL": url, "LIFECYCLE_BROKER_URL": args.broker_url,
           "LIFECYCLE_HOME": str(home), "LIFECYCLE_INSTANT_JOBS": "true"}
    os.environ.update(env)
    reset_process_state()
    upgrade(url)
    rates: list[tuple[float, float]] = []
    try:
        with WorkerProcesses(env, home / "logs") as workers:
            workers.start("orchestrator", concurrency=args.orchestrator_concurrency)
            workers.start("ingestion,kb_index,analysis,reporting",
                          concurrency=args.job_concurrency)
            for round_ in range(args.repeat):
                rates.append(one_round(args.runs, round_))
    finally:
        reset_process_state()
        drop_database(args.database_url, name)
    lifecycles = statistics.median(r[0] for r in rates)
    transitions = statistics.median(r[1] for r in rates)
    print(f"median over {args.repeat} rounds of {args.runs} lifecycles: "
          f"{lifecycles:.2f} lifecycles/s, {transitions:.1f} transitions/s")
    return 0


def one_round(runs: int, round_: int) -> tuple[float, float]:
    owner = Actor(f"bench-{round_}-{uuid.uuid4().hex[:6]}", "user:owner")
    reviewer = ScriptedReviewer(Actor(owner.tenant_id, "user:reviewer"))
    assessments = [create_assessment(owner, "org", f"bench {i}") for i in range(runs)]
    began = time.perf_counter()
    run_ids = []
    for assessment in assessments:
        run = start_lifecycle(owner, assessment.id, f"bench-{assessment.id}")
        run_ids.append(run.id)
    # No documents were uploaded before the start: upload the signal as a person would.
    from orchestrator.producer import send_signal

    for run_id in run_ids:
        send_signal(owner, run_id, "documents_uploaded", "docs", payload={"document_count": 1})
    drive_all(reviewer, run_ids, timeout_s=600)
    elapsed = time.perf_counter() - began
    with transaction() as session:
        completed = session.scalar(select(func.count()).select_from(WorkflowRun).where(
            WorkflowRun.id.in_(run_ids), WorkflowRun.status == "completed"))
        steps = session.scalar(select(func.count()).select_from(StepExecution).where(
            StepExecution.run_id.in_(run_ids)))
        signals = session.scalar(select(func.count()).select_from(InboxSignal).where(
            InboxSignal.run_id.in_(run_ids)))
    print(f"round {round_}: {completed}/{runs} completed in {elapsed:.2f} s, "
          f"{steps} step executions, {signals} signals")
    return (completed or 0) / elapsed, (steps or 0) / elapsed


if __name__ == "__main__":
    sys.exit(main())
