"""How long a `lifecycle` command takes to start, as a whole process.

Each command below runs in a fresh interpreter (`python -m orchestrator ...`, what the
`lifecycle` console script runs) several times, rounds alternated; the wall time of each
run is recorded and the median, min and max printed per command, with the machine's load.
Nothing here is an assertion: the figures are for people to compare.

    python -m bench.cli_start --runs 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.record import add_record_flag, record_if_asked

ROOT = Path(__file__).resolve().parents[1]
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--help",),
    ("--version",),
    ("list", "--help"),
    ("demo", "--help"),
    ("sweep", "--help"),
)


def run_once(args: tuple[str, ...]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"lifecycle {' '.join(args)} failed: {done.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per command")
    add_record_flag(parser)
    options = parser.parse_args()
    times: dict[tuple[str, ...], list[float]] = {args: [] for args in COMMANDS}
    run_once(("--help",))  # warm the file cache and the bytecode once
    for _ in range(options.runs):
        for args in COMMANDS:
            times[args].append(run_once(args))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {options.runs} runs")
    print(f"{'command':<28} {'median':>8} {'min':>8} {'max':>8}")
    for args, seconds in times.items():
        label = "lifecycle " + " ".join(args)
        print(
            f"{label:<28} {statistics.median(seconds):7.3f}s {min(seconds):7.3f}s "
            f"{max(seconds):7.3f}s"
        )
    medians = [
        (f"lifecycle {' '.join(a)}, median", statistics.median(s), "s") for a, s in times.items()
    ]
    record_if_asked(options, "cli_start", medians)


if __name__ == "__main__":
    main()
