"""What the figures were measured on: the machine, its load, the disk's commit latency."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psutil
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from bench.compare.results import percentile
from orchestrator.testing.worker_processes import ROOT


@dataclass(frozen=True)
class Machine:
    date: str
    commit: str
    cpus: int
    memory_gib: float
    cpu_model: str
    python: str
    postgres: str
    load_before: float
    commit_ms_p50: float
    commit_ms_p90: float
    load_after: float = float("nan")

    def describe(self) -> str:
        return (
            f"{self.date}; {self.cpus} cores ({self.cpu_model}), "
            f"{self.memory_gib:.0f} GiB; Python {self.python}, {self.postgres}; "
            f"1-minute load average {self.load_before:.1f} at the fleet's start, "
            f"{self.load_after:.1f} at the end (other work shares these cores); a "
            f"writing commit takes {self.commit_ms_p50:.1f} ms p50 / "
            f"{self.commit_ms_p90:.1f} ms p90 (WAL flush)"
        )


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git(
        "status", "--porcelain", "--untracked-files=no", "--", "orchestrator", "workers", "bench"
    )
    return f"{head}{' + uncommitted changes' if dirty else ''}"


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _commit_latency(database_url: str, samples: int = 40) -> tuple[float, float, str]:
    """Latency of a one-row writing commit (it waits for the WAL flush) in a database the
    benchmark owns, and the server's version."""
    engine = create_engine(make_url(database_url).set(drivername="postgresql+psycopg"))
    timings = []
    with engine.connect() as connection:
        version = str(connection.scalar(text("SHOW server_version")))
        connection.execute(text("CREATE TABLE bench_commit_probe (x int)"))
        connection.commit()
        for _ in range(samples):
            began = time.perf_counter()
            connection.execute(text("INSERT INTO bench_commit_probe VALUES (1)"))
            connection.commit()
            timings.append(1000 * (time.perf_counter() - began))
        connection.execute(text("DROP TABLE bench_commit_probe"))
        connection.commit()
    engine.dispose()
    return percentile(timings, 50), percentile(timings, 90), f"PostgreSQL {version}"


def describe_machine(database_url: str) -> Machine:
    p50, p90, postgres = _commit_latency(database_url)
    return Machine(
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        commit=_commit(),
        cpus=os.cpu_count() or 0,
        memory_gib=psutil.virtual_memory().total / 2**30,
        cpu_model=_cpu_model(),
        python=platform.python_version(),
        postgres=postgres,
        load_before=os.getloadavg()[0],
        commit_ms_p50=p50,
        commit_ms_p90=p90,
    )
