"""A process that renewed job leases exits cleanly: the renewing thread is stopped before
the interpreter finalises. With it still running, such a process crashed at exit (a
segmentation fault, in most runs of this script)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import atexit, threading
from orchestrator.jobs import heartbeat

def still_running() -> None:  # registered first, so it runs after the module's own
    names = [t.name for t in threading.enumerate() if t.name == "job-lease-renewer"]
    print("renewers at exit:", len(names), flush=True)

atexit.register(still_running)
heartbeat._ensure_renewer()
heartbeat._ensure_renewer()  # one thread per process, one stop
print("renewer started", flush=True)
"""


def test_the_renewer_has_stopped_when_the_interpreter_exits(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIFECYCLE_")}
    env |= {"LIFECYCLE_HOME": str(tmp_path), "LIFECYCLE_JOB_HEARTBEAT_INTERVAL_S": "0.05"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["renewer started", "renewers at exit: 0"], done.stdout
