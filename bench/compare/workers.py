"""Celery worker processes for the benchmarks: any app module, a role for SQL counting."""

from __future__ import annotations

import subprocess
import sys
import uuid

from bench.compare import sqlcount
from orchestrator.testing.worker_processes import ROOT, WorkerProcesses


class BenchWorkers(WorkerProcesses):
    """WorkerProcesses that can start another app module (`bench.compare.sqlcount_app`,
    `bench.compare.floor_app`) and knows each worker's pid and role."""

    log_level = "WARNING"  # the same for every system measured: logging costs CPU

    def __enter__(self) -> BenchWorkers:
        super().__enter__()
        return self

    def start_app(
        self,
        app: str,
        queues: str,
        *,
        role: str,
        concurrency: int = 2,
        pool: str = "threads",
        include: tuple[str, ...] = (),
    ) -> str:
        name = f"{role}-{uuid.uuid4().hex[:6]}@bench"
        log = (self.log_dir / f"{name}.log").open("ab")
        env = {**self.env, sqlcount.ROLE_ENV: role}
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                app,
                "worker",
                "-Q",
                queues,
                "-P",
                pool,
                "-c",
                str(concurrency),
                "-n",
                name,
                "-l",
                self.log_level,
                "--without-mingle",
                "--without-gossip",
                *(["--include", ",".join(include)] if include else []),
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=log,
        )
        self.workers[name] = process
        self._await_ready(name, process)
        return name

    def pid(self, name: str) -> int:
        return self.workers[name].pid

    def pids(self) -> dict[str, int]:
        return {name: process.pid for name, process in self.workers.items()}
