"""Where the fleet's worker processes spend their time: py-spy samples during a round.

py-spy records a process from outside (no code change, no restart) at 100 Hz, in one of
two modes:

- cpu (`--gil`): only the thread holding the GIL is sampled, so the shares are of the
  process's Python CPU time, the Celery consumer loop included. On two shared cores this
  is what limits throughput.
- wall (`--idle`): every thread, waiting or not, but only samples taken inside a Celery
  task body are kept: the shares are of the tasks' wall time, waits included (waiting
  for PostgreSQL ends in psycopg's `Connection.wait`, for Redis in a socket read). This
  is what the completion -> dispatch latency is made of.

The raw collapsed stacks are summarised as the share of samples that contain a function
anywhere on the stack (inclusive) and at the top (self).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

MODES = {"cpu": "--gil", "wall": "--idle"}
TASK_FRAME = "build_tracer.<locals>.trace_task"
PROJECT_PACKAGES = (
    "orchestrator/",
    "workers/",
    "jobs/",
    "lifecycle/",
    "sweeps/",
    "db/",
    "observability/",
    "contracts/",
    "notifications/",
)


@dataclass
class Profile:
    role: str
    mode: str
    samples: int = 0
    inclusive: Counter[str] = field(default_factory=Counter)
    own: Counter[str] = field(default_factory=Counter)

    def top(self, counter: Counter[str], limit: int) -> list[tuple[str, float]]:
        if not self.samples:
            return []
        return [(name, 100 * n / self.samples) for name, n in counter.most_common(limit)]


def _py_spy() -> str:
    binary = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if binary is None:
        raise RuntimeError("py-spy is not installed (pip install -e '.[bench]')")
    return binary


class Recorder:
    """py-spy record on each pid until stop(); then parse what it wrote."""

    def __init__(self, pids: dict[str, int], out_dir: Path, mode: str, rate: int = 100) -> None:
        self.mode = mode
        self.files = {role: out_dir / f"{role}-{mode}.pyspy.txt" for role in pids}
        self.processes: list[subprocess.Popen[bytes]] = []
        out_dir.mkdir(parents=True, exist_ok=True)
        for role, pid in pids.items():
            self.processes.append(
                subprocess.Popen(
                    [
                        _py_spy(),
                        "record",
                        "--pid",
                        str(pid),
                        "--rate",
                        str(rate),
                        "--format",
                        "raw",
                        "--output",
                        str(self.files[role]),
                        "--nonblocking",
                        MODES[mode],
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )

    def stop(self) -> dict[str, Profile]:
        for process in self.processes:
            process.send_signal(signal.SIGINT)
        for process in self.processes:
            process.wait(timeout=60)
        return {role: parse(role, path, self.mode) for role, path in self.files.items()}


def _frame_name(frame: str) -> str:
    # "function (/abs/path/pkg/module.py:123)" -> "function (pkg/module.py)"
    name, _, where = frame.partition(" (")
    module = "/".join(where.split(":", 1)[0].split("/")[-2:])
    return f"{name} ({module})" if module else name


def is_project_frame(name: str) -> bool:
    return name.rpartition(" (")[2].startswith(PROJECT_PACKAGES)


def parse(role: str, path: Path, mode: str) -> Profile:
    profile = Profile(role, mode)
    if not path.exists():
        return profile
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        frames = [_frame_name(f) for f in stack.split(";") if f and not f.startswith("thread")]
        in_task = any(name.startswith(TASK_FRAME) for name in frames)
        if not frames or (mode == "wall" and not in_task):
            continue  # wall mode: a thread waiting for work, the consumer loop, a timer
        count = int(count_text)
        profile.samples += count
        profile.own[frames[-1]] += count
        for name in set(frames):
            profile.inclusive[name] += count
    return profile
