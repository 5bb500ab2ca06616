"""Celery worker processes for the benchmarks: any app module, a role for SQL counting."""

from __future__ import annotations

import uuid

from bench.compare import sqlcount
from orchestrator.testing.worker_processes import WorkerProcesses


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
        return self._launch(
            name,
            queues,
            pool=pool,
            concurrency=concurrency,
            env={**self.env, sqlcount.ROLE_ENV: role},
            include=include,
            app=app,
            log_level=self.log_level,
        )

    def pid(self, name: str) -> int:
        return self.workers[name].pid

    def pids(self) -> dict[str, int]:
        return {name: process.pid for name, process in self.workers.items()}
