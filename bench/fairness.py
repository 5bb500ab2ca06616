"""Fair sharing between tenants: tenant A starts a backlog of runs, then tenant B one run.
Prints B's wait to its first job, to the end of its machine work before a person is needed
(the framework choice) and to completion (a scripted reviewer answers B's waits), and how
long A's backlog took, with the tenant order off and on (tenant_order.py), without a
per-tenant limit and with one.

Real PostgreSQL, broker and worker processes (a coordinator and a job worker), a fresh
database and a flushed broker database per round, the hashing embedder (the figure is the
queueing, not the embedding).

    python -m bench.fairness --runs 100 --orders off,on --limits 0,1 \\
        --database-url postgresql://postgres@127.0.0.1:5432/test \\
        --broker-url redis://127.0.0.1:6379/13
"""

from __future__ import annotations

import argparse
import time
import uuid
from dataclasses import dataclass

from bench.fleet_environment import fleet_environment
from bench.options import add_database_url
from bench.record import add_record_flag, record_if_asked

SAMPLE = "access-control-policy.md"
FIRST_WAIT = "wait_for_framework_selection"
COORDINATION = "orchestrator,notifications"
JOBS = "ingestion,kb_index,analysis,reporting"


@dataclass(frozen=True)
class Round:
    order: bool
    limit: int
    first_job_s: float
    first_wait_s: float
    completed_s: float
    backlog_s: float


def _start(tenant: str, sample: bytes) -> uuid.UUID:
    from orchestrator.contracts.identity import Actor
    from orchestrator.service.documents import upload_document
    from orchestrator.service.producer import create_assessment, start_lifecycle

    owner = Actor(tenant, "user:owner@example.org")
    assessment = create_assessment(owner, "org", f"{tenant} assessment")
    upload_document(owner, assessment.id, SAMPLE, sample)
    return start_lifecycle(owner, assessment.id, idempotency_key=f"start-{assessment.id}").id


def _first_job_started(run_id: uuid.UUID) -> float | None:
    from sqlalchemy import func, select

    from orchestrator.db.models import Job
    from orchestrator.db.session import read_transaction

    with read_transaction() as session:
        started = session.scalar(select(func.min(Job.started_at)).where(Job.run_id == run_id))
    return started.timestamp() if started is not None else None


def _at_first_wait(run_ids: list[uuid.UUID]) -> int:
    from sqlalchemy import func, select

    from orchestrator.db.models import WorkflowRun
    from orchestrator.db.session import read_transaction

    with read_transaction() as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(WorkflowRun)
                .where(WorkflowRun.id.in_(run_ids), WorkflowRun.current_step == FIRST_WAIT)
            )
            or 0
        )


def _round(
    args: argparse.Namespace, order: bool, limit: int, sample: bytes, timeout_s: float
) -> Round:
    from orchestrator.contracts.identity import Actor
    from orchestrator.demo.reviewer import ScriptedReviewer
    from orchestrator.service.producer import get_run
    from orchestrator.service.roles import grant_role
    from orchestrator.testing.worker_processes import WorkerProcesses

    settings = {
        "LIFECYCLE_EMBEDDER": "hashing",
        "LIFECYCLE_TENANT_JOB_LIMIT": str(limit),
        "LIFECYCLE_TENANT_FAIR_ORDER": str(order).lower(),
    }
    with (
        fleet_environment(args.database_url, args.broker_url, "lifecycle_fairness", settings) as (
            env,
            home,
        ),
        WorkerProcesses(env, home / "logs", ready_timeout_s=120) as fleet,
    ):
        fleet.start(COORDINATION, concurrency=2)
        fleet.start(JOBS, concurrency=args.concurrency)
        began = time.monotonic()
        backlog = [_start("tenant-a", sample) for _ in range(args.runs)]
        b_started = time.time()
        b_run = _start("tenant-b", sample)
        b_began = time.monotonic()
        reviewer = ScriptedReviewer(Actor("tenant-b", "user:reviewer@example.org"))
        grant_role("tenant-b", reviewer.actor.actor_id, "assessor", actor_id="user:admin")
        first_job = first_wait = completed = backlog_done = None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and (completed is None or backlog_done is None):
            if first_job is None and (at := _first_job_started(b_run)) is not None:
                first_job = at - b_started
            run = get_run(reviewer.actor, b_run)
            if first_wait is None and run.current_step == FIRST_WAIT:
                first_wait = time.monotonic() - b_began
            if completed is None and run.status == "completed":
                completed = time.monotonic() - b_began
            if backlog_done is None and _at_first_wait(backlog) == len(backlog):
                backlog_done = time.monotonic() - began
            if completed is None and not reviewer.answer(run):
                time.sleep(0.05)  # a reviewer polling the run's page
        if completed is None or backlog_done is None or first_job is None:
            raise TimeoutError(f"round with limit {limit} not done in {timeout_s} s")
        assert first_wait is not None
        return Round(order, limit, first_job, first_wait, completed, backlog_done)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="tenant A's backlog of runs")
    parser.add_argument("--orders", default="off,on", help="tenant order settings to compare")
    parser.add_argument("--limits", default="0,1", help="per-tenant job limits to compare")
    parser.add_argument("--concurrency", type=int, default=2, help="job worker threads")
    parser.add_argument("--timeout", type=float, default=1800.0)
    add_database_url(parser)
    parser.add_argument("--broker-url", default="redis://127.0.0.1:6379/13")
    add_record_flag(parser)
    args = parser.parse_args()
    from orchestrator.demo.run import SAMPLES

    sample = (SAMPLES / SAMPLE).read_bytes()
    print(
        f"tenant A: {args.runs} runs, then tenant B: 1 run; job worker of {args.concurrency} "
        "threads; seconds from B's start"
    )
    print(
        f"{'order':>6} {'limit':>6} {'B first job':>12} {'B at a person':>14} {'B done':>8} "
        f"{'A backlog':>10}"
    )
    rounds = []
    for order in (x.strip() == "on" for x in args.orders.split(",")):
        for limit in (int(x) for x in args.limits.split(",")):
            r = _round(args, order, limit, sample, args.timeout)
            rounds.append(r)
            shown = "none" if r.limit == 0 else str(r.limit)
            print(
                f"{'on' if r.order else 'off':>6} {shown:>6} {r.first_job_s:>12.1f} "
                f"{r.first_wait_s:>14.1f} {r.completed_s:>8.1f} {r.backlog_s:>10.1f}"
            )
    record_if_asked(args, "fairness", [f for r in reversed(rounds) for f in _figures(r)])
    return 0


def _figures(r: Round) -> list[tuple[str, float, str]]:
    setting = f"order {'on' if r.order else 'off'}, {f'limit {r.limit}' if r.limit else 'no limit'}"
    return [
        (f"B's first job, {setting}", r.first_job_s, "s"),
        (f"B done, {setting}", r.completed_s, "s"),
        (f"A's backlog, {setting}", r.backlog_s, "s"),
    ]


if __name__ == "__main__":
    raise SystemExit(main())
