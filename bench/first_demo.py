"""How long a newcomer's first `lifecycle demo` takes, and a second one in the same home.

Each cold run is `python -m orchestrator demo` (what the `lifecycle` console script runs)
in a fresh home on the embedded default, with no LIFECYCLE_ variable of this shell: a new
installation's first run. The warm run repeats it in the last cold run's home (its kept
files, a new process). Printed per run: the wall time of the whole process and the run's own
time as the demo reports it (`completed in … seconds`), then the medians.

    python -m bench.first_demo --runs 3
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.record import add_record_flag, record_if_asked

ROOT = Path(__file__).resolve().parents[1]
_COMPLETED = re.compile(r"completed in ([\d.]+) (seconds|minutes)")


def run_demo(home: Path) -> tuple[float, float]:
    """The process's wall seconds and the run's own, as the demo prints them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIFECYCLE_")}
    env["LIFECYCLE_HOME"] = str(home)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "demo"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    found = _COMPLETED.search(done.stdout)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"the demo failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    own = float(found.group(1)) * (60 if found.group(2) == "minutes" else 1)
    return wall, own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="cold runs, each in a fresh home")
    add_record_flag(parser)
    options = parser.parse_args()
    cold: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as folder:
        for number in range(options.runs):
            home = Path(folder) / f"home-{number}"
            cold.append(run_demo(home))
            print(f"cold run {number + 1}: {cold[-1][0]:.1f} s wall, the run {cold[-1][1]:.1f} s")
        warm = run_demo(home)
        print(f"warm run (same home): {warm[0]:.1f} s wall, the run {warm[1]:.1f} s")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    walls = [wall for wall, _ in cold]
    owns = [own for _, own in cold]
    print(
        f"cold: median {statistics.median(walls):.1f} s wall (min {min(walls):.1f}, max "
        f"{max(walls):.1f}), the run {statistics.median(owns):.1f} s"
    )
    record_if_asked(
        options,
        "first_demo",
        [
            ("first demo, wall, median", statistics.median(walls), "s"),
            ("first demo, the run, median", statistics.median(owns), "s"),
            ("first demo, wall, max", max(walls), "s"),
            ("second demo, wall", warm[0], "s"),
            ("second demo, the run", warm[1], "s"),
        ],
    )


if __name__ == "__main__":
    main()
