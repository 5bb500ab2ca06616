"""Starts and stops real `celery worker` processes on this machine (tests, benchmarks)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from types import TracebackType

from orchestrator.engine.messages import get_app

ROOT = Path(__file__).resolve().parents[2]


class WorkerProcesses:
    def __init__(self, env: dict[str, str], log_dir: Path, ready_timeout_s: float = 60) -> None:
        self.env = {**os.environ, **env}
        self.log_dir = log_dir
        self.ready_timeout_s = ready_timeout_s
        self.workers: dict[str, subprocess.Popen[bytes]] = {}

    def __enter__(self) -> WorkerProcesses:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return self

    def __exit__(self, *exc: tuple[type[BaseException], BaseException, TracebackType]) -> None:
        for name in list(self.workers):
            self.stop(name)

    def start(
        self,
        queues: str,
        *,
        pool: str = "threads",
        concurrency: int = 2,
        extra_env: dict[str, str] | None = None,
        include: tuple[str, ...] = (),
        host: tuple[str, ...] = (),
    ) -> str:
        """Start a worker on `queues` and wait until it answers a ping; `include` names
        extra modules it imports (test hooks such as orchestrator.testing.instant_jobs);
        `host` prefixes its command (`ip netns exec <ns>`: a worker on another host)."""
        name = f"w{len(self.workers)}-{uuid.uuid4().hex[:6]}@test"
        return self._launch(
            name,
            queues,
            pool=pool,
            concurrency=concurrency,
            env={**self.env, **(extra_env or {})},
            include=include,
            host=host,
        )

    def _launch(
        self,
        name: str,
        queues: str,
        *,
        pool: str,
        concurrency: int,
        env: dict[str, str],
        include: tuple[str, ...] = (),
        host: tuple[str, ...] = (),
        app: str = "orchestrator",
        log_level: str = "INFO",
    ) -> str:
        """Start worker `name` of `app` (its log in the log directory) and wait until it
        answers a ping."""
        log = (self.log_dir / f"{name}.log").open("ab")
        process = subprocess.Popen(
            [
                *host,
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
                log_level,
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

    def _await_ready(self, name: str, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"worker {name} exited: {self.log_of(name)[-2000:]}")
            if get_app().control.ping(destination=[name], timeout=0.5):
                return
        raise TimeoutError(f"worker {name} did not answer a ping: {self.log_of(name)[-2000:]}")

    def kill(self, name: str) -> None:
        """SIGKILL: no shutdown, no acks, no cleanup."""
        process = self.workers.pop(name)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)

    def stop(self, name: str) -> None:
        process = self.workers.pop(name)
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def log_of(self, name: str) -> str:
        return (self.log_dir / f"{name}.log").read_text(errors="replace")
