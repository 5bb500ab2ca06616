"""Lifecycle throughput on PostgreSQL + Redis with instant jobs (the fleet alone).

Starts real worker processes on a fresh database, runs N lifecycles at once through all
20 steps with every wait answered as soon as it opens, and prints lifecycles/s and
transitions/s (step executions per second) per round and their median. The side-by-side
comparison with bare Celery and DBOS is bench/compare/ (python -m bench.compare); this
shares its fleet phase.

    python -m bench.throughput --runs 50 \\
        --database-url postgresql://postgres@127.0.0.1:5432/test \\
        --broker-url redis://127.0.0.1:6379/14
"""

from __future__ import annotations

import argparse
import sys

from bench.compare.fleet import Fleet, FleetOptions
from bench.compare.results import PhaseResult
from bench.options import add_database_url
from bench.record import add_record_flag, record_if_asked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    add_database_url(parser)
    parser.add_argument("--broker-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--orchestrator-concurrency", type=int, default=8)
    parser.add_argument("--job-concurrency", type=int, default=2)
    add_record_flag(parser)
    args = parser.parse_args()

    options = FleetOptions(
        args.database_url, args.broker_url, args.orchestrator_concurrency, args.job_concurrency
    )
    with Fleet(options) as fleet:
        rounds = []
        for number in range(args.repeat):
            figures = fleet.round(args.runs, f"throughput{number}")
            print(
                f"round {number}: {figures.lifecycles}/{args.runs} completed in "
                f"{figures.elapsed_s:.2f} s, {figures.transitions} step executions, "
                f"{figures.signals} applied signals",
                flush=True,
            )
            rounds.append(figures)
    result = PhaseResult.of("fleet", rounds, {})
    print(
        f"median over {args.repeat} rounds of {args.runs} lifecycles: "
        f"{result.lifecycles_per_s:.2f} lifecycles/s, "
        f"{result.transitions_per_s:.1f} transitions/s"
    )
    record_if_asked(args, "throughput", [("fleet", result.lifecycles_per_s, "lifecycles/s")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
