"""Fleet vs floor vs peer, side by side, in one run on this machine.

1. floor: bare Celery ping-pong on the fleet's broker and settings (N chains of 20 hops);
2. fleet, peer and fair peer, their rounds alternated (bench.compare.side_by_side):
   - fleet: N assessments through the 20-step lifecycle, instant jobs, every wait
     answered as it opens;
   - peer: DBOS Transact running the same shape (20 steps, 7 waiting for a message);
   - fair peer: the same, each step writing what the fleet writes per applied signal;
3. the fleet again on RabbitMQ; then, per count of runs waiting for approval (10,000 and
   100,000), two fresh fleets, one whose database holds them: the database load measured
   absent vs present (idle, one beat cycle) and the two fleets' rounds alternated
   (throughput).

Prints the table; with --record writes it to bench/results/compare.md (the page shows it
whole) and the headline figures to bench/results/compare.json, then regenerates
docs/benchmarks.md.

    python -m bench.compare --record             # N=30, 3 rounds, 10,000 and 100,000 waiting
    python -m bench.compare --runs 10 --repeat 1 --waiting 1000
    python -m bench.compare --profile            # + py-spy of the fleet's workers (2 rounds)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path

from bench.compare import floor_app as floor
from bench.compare import sqlcount  # noqa: E402
from bench.compare.fleet import Fleet, FleetOptions, rabbitmq_version, run_fleet
from bench.compare.floor_runs import run_floor
from bench.compare.machine import describe_machine
from bench.compare.peer_runs import Peer
from bench.compare.profile import Profile, Recorder
from bench.compare.report import RabbitPhase, Report, render
from bench.compare.results import PhaseResult
from bench.compare.side_by_side import System, alternate
from bench.compare.waiting_phase import waiting_rounds
from bench.compare.workers import BenchWorkers
from bench.options import add_database_url
from bench.record import RESULTS, add_record_flag, record_if_asked
from orchestrator.testing.reset import reset_process_state

HOPS = 20


def _counts(value: str) -> list[int]:
    try:
        counts = [int(part.replace("_", "")) for part in value.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of counts: {value!r}") from None
    if any(n < 0 for n in counts):
        raise argparse.ArgumentTypeError(f"counts are not negative: {value!r}")
    return [n for n in counts if n > 0]


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="lifecycles at once (N)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per system")
    parser.add_argument(
        "--warmup", type=int, default=1, help="uncounted rounds per system before its counted ones"
    )
    parser.add_argument(
        "--waiting",
        type=_counts,
        default=[10_000, 100_000],
        help="runs waiting for approval, one count or several (10000,100000); 0 skips the phase",
    )
    parser.add_argument(
        "--waiting-repeat",
        type=int,
        default=3,
        help="fleet rounds with the waiting runs present, each beside one without",
    )
    parser.add_argument("--idle-s", type=float, default=5.0)
    add_database_url(
        parser, help="a PostgreSQL server; fresh databases are created next to this one"
    )
    parser.add_argument(
        "--broker-url",
        default="redis://127.0.0.1:6379/9",
        help="a Redis database to flush, used by nothing else meanwhile",
    )
    parser.add_argument(
        "--rabbitmq-url",
        default="amqp://guest:guest@127.0.0.1:5672//",
        help="a RabbitMQ vhost whose fleet queues may be deleted: the fleet again on it "
        "(quorum queues, publisher confirms); empty skips it",
    )
    parser.add_argument(
        "--coordinator-concurrency",
        type=int,
        default=8,
        help="threads of the coordinator's worker (docker-compose: 8)",
    )
    parser.add_argument(
        "--job-concurrency",
        type=int,
        default=2,
        help="threads of the job worker (docker-compose: 2)",
    )
    parser.add_argument("--peer-processes", type=int, default=2)
    parser.add_argument(
        "--poll-ms",
        type=float,
        default=5.0,
        help="drivers' poll interval when nothing was answered",
    )
    parser.add_argument(
        "--peer-queue-poll-ms",
        type=float,
        default=50.0,
        help="DBOS queue polling interval of the peer's workers",
    )
    parser.add_argument(
        "--worker-log-level",
        default="WARNING",
        help="log level of every Celery worker started (fleet and floor)",
    )
    parser.add_argument("--skip-peer", action="store_true", help="neither peer")
    parser.add_argument(
        "--peers",
        default="bare,fair",
        help="which peers run: bare (DBOS checkpoints only), fair (the fleet's writes too)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="py-spy the fleet's workers: one extra round per mode (cpu, wall)",
    )
    add_record_flag(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    os.environ.update(
        {
            sqlcount.ENABLED_ENV: "1",
            sqlcount.ROLE_ENV: "driver",
            sqlcount.DIR_ENV: tempfile.mkdtemp(prefix="bench-sqlcount-"),
        }
    )
    sqlcount.install_if_enabled()
    BenchWorkers.log_level = args.worker_log_level
    poll_s = args.poll_ms / 1000

    print(f"floor: {args.runs} chains x {HOPS} hops, {args.repeat} rounds", flush=True)
    floor, single_hop = _floor(args)
    kinds = [] if args.skip_peer else args.peers.split(",")
    print(
        f"fleet{''.join(f', {kind} peer' for kind in kinds)}: {args.runs} lifecycles, "
        f"{args.repeat} rounds each, alternated",
        flush=True,
    )
    options = FleetOptions(
        args.database_url,
        args.broker_url,
        args.coordinator_concurrency,
        args.job_concurrency,
        poll_s,
    )
    with Fleet(options) as fleet, ExitStack() as stack:
        machine = describe_machine(fleet.url)
        systems: dict[str, System] = {"fleet": fleet}
        for kind in kinds:
            systems[kind] = stack.enter_context(
                Peer(
                    args.database_url,
                    args.peer_processes,
                    args.runs,
                    poll_s,
                    args.peer_queue_poll_ms / 1000,
                    fair=kind == "fair",
                )
            )
        results = alternate(systems, args.runs, args.repeat, args.warmup)
        stack.close()  # the peers stop before the fleet's profile and the other phases
        fleet_result = results["fleet"]
        profiles = _profile(fleet, args.runs) if args.profile else []
    on_rabbitmq = _on_rabbitmq(args, options) if args.rabbitmq_url else None
    waiting = [
        waiting_rounds(options, count, args.runs, args.waiting_repeat, args.idle_s)
        for count in args.waiting
    ]
    reset_process_state()
    peers = {kind: results[kind] for kind in kinds}
    machine = replace(machine, load_after=os.getloadavg()[0])
    report = Report(
        machine,
        args.runs,
        args.repeat,
        floor,
        fleet_result,
        peers.get("bare"),
        waiting,
        fair_peer=peers.get("fair"),
        profiles=profiles,
        floor_single_hop_ms=single_hop,
        peer_version=version("dbos"),
        warmup=args.warmup,
        on_rabbitmq=on_rabbitmq,
    )
    body = render(report)
    print(body)
    if args.record:
        (RESULTS / "compare.md").write_text(body)  # before the record regenerates the page
    record_if_asked(args, "compare", _figures(report))
    return 0


def _figures(r: Report) -> list[tuple[str, float, str]]:
    fleet = r.fleet.lifecycles_per_s
    figures = [
        (f"fleet / {label}, lifecycles/s", fleet / phase.lifecycles_per_s, "x")
        for label, phase in reversed(r.peers())
    ]
    figures += [
        ("fleet", fleet, "lifecycles/s"),
        *[(label, phase.lifecycles_per_s, "lifecycles/s") for label, phase in r.peers()],
        ("floor (bare Celery)", r.floor.lifecycles_per_s, "lifecycles/s"),
        ("fleet completion → next dispatch, p50", r.fleet.latency_ms(50), "ms"),
        ("coordinator transactions per applied signal", r.fleet.per_signal("tx"), ""),
    ]
    if r.on_rabbitmq is not None:
        figures.append(("fleet on RabbitMQ", r.on_rabbitmq.fleet.lifecycles_per_s, "lifecycles/s"))
    return figures


def _floor(args: argparse.Namespace) -> tuple[PhaseResult, float]:
    home = Path(tempfile.mkdtemp(prefix="lifecycle-floor-"))
    env = {"LIFECYCLE_BROKER_URL": args.broker_url, "LIFECYCLE_HOME": str(home)}
    os.environ.update(env)
    reset_process_state()
    env[floor.SETTINGS_ENV] = json.dumps(floor.fleet_settings())
    import redis

    redis.Redis.from_url(args.broker_url).flushdb()
    result = run_floor(
        env,
        home / "logs",
        args.broker_url,
        args.runs,
        HOPS,
        args.repeat,
        (args.coordinator_concurrency, args.job_concurrency),
        args.warmup,
    )
    shutil.rmtree(home, ignore_errors=True)  # kept, with the workers' logs, on a failure
    return result


def _on_rabbitmq(args: argparse.Namespace, options: FleetOptions) -> RabbitPhase:
    """The same fleet, rounds and driver, on RabbitMQ instead of Redis."""
    server = rabbitmq_version(args.rabbitmq_url)
    print(f"fleet on RabbitMQ {server}: {args.runs} lifecycles, {args.repeat} rounds", flush=True)
    with Fleet(replace(options, broker_url=args.rabbitmq_url)) as fleet:
        result = run_fleet(fleet, args.runs, args.repeat, "fleet-rabbitmq", warmup=args.warmup)
        result.peak_rss_mb = fleet.peak_rss()
    return RabbitPhase(server, result)


def _profile(fleet: Fleet, runs: int) -> list[Profile]:
    profiles: list[Profile] = []
    for mode in ("cpu", "wall"):
        print(f"profile: one more fleet round under py-spy ({mode})", flush=True)
        recorder = Recorder(fleet.pids(), fleet.home / "profile", mode)
        fleet.round(runs, f"profile-{mode}")
        profiles.extend(recorder.stop().values())
    return profiles


if __name__ == "__main__":
    sys.exit(main())
