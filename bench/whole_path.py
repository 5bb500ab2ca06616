"""The whole path with 1, 2 and 4 job worker processes: seconds from the start of an
assessment of the evidence procedures to its completion, and each job step's share.

Real PostgreSQL and broker, one fresh database. Per round: a new assessment of the same
procedures (shared/data/evidence, beside the repository), uploaded through the producer as
a user would, started, and driven to its end by a scripted reviewer (SOC 2; each gate's rows
decided in bulk by a colleague, each draft approved); a coordinator worker and N job workers
(one process each, solo pool, every job queue). One uncounted warm-up round first (caches,
the model's first load). Prints per worker count the whole run, each job step's seconds
(its step execution, start to end: queue wait included), the job steps' total wait for a
worker, where the cores' seconds went, and the ratio to the first count.
`ingest_documents` fans out per batch of documents, `index_kb` and `ingest_soa` per
batch of chunks; the other steps run in one
process whatever N is, which the per-step ratios show. The shipped catalogue's control
texts' vectors come with the package (`workers.analysis.shipped_vectors`): no round embeds
them.

    python -m bench.whole_path --procedures 141 --workers 1,2,4 \\
        --database-url postgresql://postgres@127.0.0.1:5432/test \\
        --broker-url redis://127.0.0.1:6379/13
"""

from __future__ import annotations

import argparse
import time
import uuid
from pathlib import Path

from bench.fleet_environment import fleet_environment
from bench.options import add_database_url
from bench.record import add_record_flag, record_if_asked
from orchestrator.jobs.batches import cores as usable_cores
from orchestrator.runtime import registrations  # noqa: F401 (the drafting functions)

ROOT = Path(__file__).resolve().parents[1]
PROCEDURES = ROOT.parent / "shared" / "data" / "evidence" / "procedures"
ADMIN = "user:bench-admin@example.org"
#: The row of the uploads' seconds, before the lifecycle starts (this process, through the
#: producer: no worker takes part, whatever their number).
UPLOADS = "(uploading the procedures, in the whole run)"
#: The row of the job steps' total wait for a worker.
WAITING = "(job steps waiting for a worker, in total)"
#: The rows of CPU seconds used during the run, by whom (all cores together).
CPU_JOBS = "(CPU s: job workers)"
CPU_COORDINATOR = "(CPU s: coordinator)"
CPU_SELF = "(CPU s: uploads and the reviewer, this process)"
CPU_REST = "(CPU s: PostgreSQL, broker, the rest of the machine)"
CPU_IDLE = "(CPU s: cores idle)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procedures", type=int, default=141)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--timeout-s", type=float, default=1800)
    parser.add_argument(
        "--model-threads",
        type=int,
        default=0,
        help="the model's threads in each job process (default: the cores over the processes)",
    )
    add_database_url(parser)
    parser.add_argument(
        "--broker-url",
        default="redis://127.0.0.1:6379/13",
        help="a Redis database to flush, used by nothing else meanwhile",
    )
    add_record_flag(parser)
    args = parser.parse_args()
    if not PROCEDURES.is_dir():
        parser.error(f"the evidence procedures are absent: {PROCEDURES}")

    with fleet_environment(args.database_url, args.broker_url, "lifecycle_whole_path") as (
        env,
        home,
    ):
        _measure(args, env, home)
    return 0


def _measure(args: argparse.Namespace, env: dict[str, str], home: Path) -> None:
    from orchestrator.engine.routing import ROUTES
    from orchestrator.testing.worker_processes import WorkerProcesses

    job_queues = ",".join(sorted({route.queue for route in ROUTES.values()}))
    files = sorted(PROCEDURES.glob("*.md"))[: args.procedures]
    counts = [int(w) for w in args.workers.split(",")]
    print(f"{len(files)} procedures; job queues {job_queues}")
    results: dict[int, tuple[float, dict[str, float]]] = {}
    cores = usable_cores()
    for round_no, workers in enumerate([counts[0], *counts]):
        # The model's threads share the cores among the job processes, as an operator sets
        # LIFECYCLE_MODEL_THREADS (docs/operating.md); --model-threads fixes them instead.
        threads = args.model_threads or max(1, cores // workers)
        if round_no == 0:
            print(f"{cores} cores; the model on {threads} thread(s) per job process", flush=True)
        with WorkerProcesses(
            env | {"LIFECYCLE_MODEL_THREADS": str(threads)}, home / "logs", ready_timeout_s=180
        ) as fleet:
            coordinator = fleet.start("orchestrator", concurrency=4)
            jobs = [fleet.start(job_queues, pool="solo", concurrency=1) for _ in range(workers)]
            groups = {
                CPU_JOBS: [fleet.workers[name].pid for name in jobs],
                CPU_COORDINATOR: [fleet.workers[coordinator].pid],
            }
            before = _cpu(groups)
            seconds, steps = _one_run(files, args.timeout_s)
            steps.update(_used(before, _cpu(groups)))
        if round_no == 0:
            print(f"warm-up, workers={workers}: {seconds:.1f} s (not counted)", flush=True)
            continue
        results[workers] = (seconds, steps)
        print(f"workers={workers} (model threads {threads}): {seconds:.1f} s", flush=True)
    _print_table(results)
    record_if_asked(args, "whole_path", _figures(results))


def _figures(results: dict[int, tuple[float, dict[str, float]]]) -> list[tuple[str, float, str]]:
    counts = list(results)
    one = results[counts[0]][0]
    # The headline: the whole run on the most processes.
    figures = [(_figure_name("whole run", n), results[n][0], "s") for n in reversed(counts)]
    figures += [
        (f"whole run, {counts[0]} / {n} processes", one / results[n][0], "x") for n in counts[1:]
    ]
    for label in ("index_kb", "ingest_soa"):
        for n in counts:
            figures.append((_figure_name(label, n), results[n][1].get(label, 0.0), "s"))
    return figures


def _figure_name(label: str, processes: int) -> str:
    return f"{label}, {processes} process{'es' if processes > 1 else ''}"


def _cpu(groups: dict[str, list[int]]) -> dict[str, float]:
    """CPU seconds so far: of each group of worker processes, of this process (the uploads
    and the reviewer), of the rest of the machine (PostgreSQL, the broker, anything else:
    its busy seconds less those), and the cores' idle seconds."""
    import psutil

    from bench.compare.procs import cpu_s, own_cpu_s

    machine = psutil.cpu_times()
    idle = machine.idle + getattr(machine, "iowait", 0.0)
    named = {group: sum(cpu_s(pid) for pid in pids) for group, pids in groups.items()}
    named[CPU_SELF] = own_cpu_s()
    return {**named, CPU_REST: sum(machine) - idle - sum(named.values()), CPU_IDLE: idle}


def _used(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """Where the cores went between two readings of `_cpu`."""
    return {key: after[key] - before[key] for key in before}


def _one_run(files: list[Path], timeout_s: float) -> tuple[float, dict[str, float]]:
    """One assessment of `files` to its end: (seconds, job step -> seconds)."""
    from sqlalchemy import select

    from orchestrator.contracts.identity import Actor
    from orchestrator.contracts.steps import StepKind
    from orchestrator.db.models import Job, StepExecution
    from orchestrator.db.session import transaction
    from orchestrator.demo.reviewer import ScriptedReviewer, drive
    from orchestrator.lifecycle.definition import STEP_SPECS
    from orchestrator.service.documents import upload_document
    from orchestrator.service.producer import create_assessment, start_lifecycle
    from orchestrator.service.roles import grant_role

    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    owner = Actor(tenant, "user:owner@example.org")
    reviewer = Actor(tenant, "user:reviewer@example.org")
    grant_role(tenant, reviewer.actor_id, "assessor", actor_id=ADMIN, reason="the bench reviewer")
    began = time.monotonic()
    assessment = create_assessment(owner, "bench-org", "Whole-path bench")
    for path in files:
        upload_document(owner, assessment.id, path.name, path.read_bytes())
    uploaded = time.monotonic() - began
    run = start_lifecycle(owner, assessment.id, idempotency_key=f"bench-{assessment.id}")
    final = drive(ScriptedReviewer(reviewer, framework="SOC 2"), run.id, timeout_s)
    seconds = time.monotonic() - began
    if final.status != "completed":
        raise RuntimeError(f"run {run.id} ended {final.status} at {final.current_step}")
    jobs = {step.value for step, spec in STEP_SPECS.items() if spec.kind is StepKind.JOB}
    with transaction() as session:
        rows = session.scalars(
            select(StepExecution).where(StepExecution.run_id == run.id).order_by(StepExecution.id)
        ).all()
        steps = {
            row.step: (row.finished_at - row.started_at).total_seconds()
            for row in rows
            if row.step in jobs and row.finished_at is not None and row.status == "completed"
        }
        # From the job's row written to a worker taking it: the fleet's own latency, paid
        # once per job step whatever the step's size.
        waits = [
            (job.started_at - job.created_at).total_seconds()
            for job in session.scalars(select(Job).where(Job.run_id == run.id))
            if job.started_at is not None
        ]
    steps[WAITING] = sum(waits)
    steps[UPLOADS] = uploaded
    return seconds, steps


def _print_table(results: dict[int, tuple[float, dict[str, float]]]) -> None:
    if not results:
        return
    first = next(iter(results))
    counts = list(results)
    header = " | ".join(f"{n} worker{'s' if n > 1 else ''}" for n in counts)
    print(f"\n| seconds | {header} |")
    print("|---|" + "---|" * len(counts))

    def cells(values: list[float]) -> str:
        return " | ".join(
            f"{v:.1f}" + (f" (x{values[0] / v:.2f})" if i and v else "")
            for i, v in enumerate(values)
        )

    print(f"| whole run | {cells([results[n][0] for n in counts])} |")
    for step in results[first][1]:
        print(f"| {step} | {cells([results[n][1].get(step, 0.0) for n in counts])} |")


if __name__ == "__main__":
    raise SystemExit(main())
