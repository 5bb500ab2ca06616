"""Helpers for operating tests: the celery CLI as a subprocess, a dead-lettered run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.identity import Actor
from orchestrator.db.models import Job, StepExecution
from orchestrator.db.session import transaction
from orchestrator.service.dead_letters import DeadLetterView, list_dead_letters
from orchestrator.service.producer import get_run
from orchestrator.service.read_models import RunView
from orchestrator.sweeps import recover_lost_jobs
from tests.support.fleet_runs import start_assessment
from tests.support.polling import poll, scaled, wait_for

ROOT = Path(__file__).resolve().parents[2]
#: The sweep gives up on a queued job at once: no re-dispatch, a deadline of 1 ms.
GIVE_UP_AT_ONCE = {
    "LIFECYCLE_SWEEP_REDISPATCH_LIMIT": "0",
    "LIFECYCLE_SWEEP_QUEUED_DEADLINE_S": "0.001",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    """`celery -A orchestrator lifecycle ...`, the real entry point, in this test's env."""
    return subprocess.run(
        [sys.executable, "-m", "celery", "-A", "orchestrator", "lifecycle", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def cli_json(*args: str, env: dict[str, str] | None = None) -> Any:
    done = cli(*args, "--json", env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def here(*args: str) -> Result:
    """A command that changes nothing (list, show, a dry run, a refused command) through
    the same `celery` group and its plugin entry point, in this process: a process start
    costs seconds on a busy machine."""
    from celery.bin.celery import celery

    return CliRunner().invoke(
        celery, ["-A", "orchestrator", "lifecycle", *args], catch_exceptions=False
    )


def here_json(*args: str) -> Any:
    done = here(*args, "--json")
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def add_consumer(queue: str, worker: str) -> None:
    """Have a running worker consume one more queue (`celery control add_consumer`)."""
    from orchestrator.engine.messages import get_app

    replies = get_app().control.add_consumer(
        queue, destination=[worker], reply=True, timeout=scaled(10)
    )
    assert replies and "ok" in next(iter(replies[0].values())), replies


def step_attempts(run_id: uuid.UUID, step: str) -> list[tuple[int, str]]:
    with transaction() as session:
        rows = session.execute(
            select(StepExecution.attempt, StepExecution.status)
            .where(StepExecution.run_id == run_id, StepExecution.step == step)
            .order_by(StepExecution.attempt)
        ).all()
    return [(attempt, status) for attempt, status in rows]


def job_status(job_id: str) -> str | None:
    with transaction() as session:
        return session.scalar(select(Job.status).where(Job.id == job_id))


def run_with_dead_lettered_ingestion(owner: Actor) -> tuple[RunView, dict[str, Any]]:
    """A run whose ingestion job was never consumed (no worker on that queue yet), given up
    by the lost-jobs sweep run from the CLI: the job is dead-lettered and the run fails.
    Needs a worker on the orchestrator queue."""
    run = start_assessment(owner, documents=1)
    job_id = f"{run.id}:ingest_documents:1"
    wait_for(lambda: job_status(job_id) == "queued", what="the ingestion job queued")
    swept = cli_json("sweep", "lost-jobs", env=GIVE_UP_AT_ONCE)
    assert swept["lost-jobs"]["dead_lettered"] >= 1, swept
    wait_for(lambda: get_run(owner, run.id).status == "failed", what="the run to fail")
    [letter] = here_json("dead-letters", "list", "--run", str(run.id))["items"]
    assert letter["job_id"] == job_id
    return get_run(owner, run.id), letter


def give_up_on(run_id: uuid.UUID, monkeypatch: pytest.MonkeyPatch) -> DeadLetterView:
    """Run the lost-jobs sweep here with no re-dispatch until the run's job is dead-lettered."""

    def letters() -> list[DeadLetterView]:
        recover_lost_jobs()
        return [d for d in list_dead_letters(include_replayed=True) if d.run_id == run_id]

    with monkeypatch.context() as patch:
        for key, value in GIVE_UP_AT_ONCE.items():
            patch.setenv(key, value)
        reset_settings()
        [letter] = poll(letters, bool, timeout_s=10, what="the job dead-lettered")
    reset_settings()
    return letter
