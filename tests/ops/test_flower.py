"""Flower against the test broker: operators read workers, queues and tasks through its
API with credentials; without them they are refused; placeholders keep it from starting."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.engine.routing import QUEUES
from orchestrator.service.producer import get_run
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.cli import free_port
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import poll, wait_for

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "orchestrator" / "runtime" / "flowerconfig.py"
USER, PASSWORD = "operator", "Flower-test-7f3a91c2d4"


def flower_command(port: int) -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "orchestrator", "flower", f"--conf={CONF}",
            f"--port={port}", "--address=127.0.0.1"]


def get(url: str, credentials: tuple[str, str] | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url)
    if credentials is not None:
        token = base64.b64encode(":".join(credentials).encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
            return response.status, json.loads(body) if body[:1] in (b"{", b"[") else body
    except urllib.error.HTTPError as error:
        return error.code, None


@pytest.fixture
def flower(fleet: Fleet, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = (tmp_path / "flower.log").open("wb")
    process = subprocess.Popen(flower_command(port), cwd=ROOT, stdout=log, stderr=log,
                               env={**os.environ, "FLOWER_BASIC_AUTH": f"{USER}:{PASSWORD}"})
    base = f"http://127.0.0.1:{port}"
    try:
        def started() -> bool:
            assert process.poll() is None, (tmp_path / "flower.log").read_text()
            return _answers(f"{base}/healthcheck")

        poll(started, bool, timeout_s=60, what="Flower to start", interval_s=0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)


def _answers(url: str) -> bool:
    try:
        return get(url)[0] == 200
    except OSError:
        return False


def test_flower_shows_workers_queues_and_tasks_of_a_run(fleet: Fleet, flower: str) -> None:
    worker = fleet.start(",".join(QUEUES))
    owner, _ = new_tenant()
    run = start_assessment(owner, documents=1)
    wait_for(lambda: get_run(owner, run.id).current_step == "wait_for_framework_selection",
             what="the framework wait")
    auth = (USER, PASSWORD)
    job_id = f"{run.id}:ingest_documents:1"

    def job_seen() -> bool:
        status, tasks = get(f"{flower}/api/tasks", auth)
        return status == 200 and tasks.get(job_id, {}).get("state") == "SUCCESS"

    wait_for(job_seen, what="Flower to see the ingestion job succeed")
    tasks = get(f"{flower}/api/tasks", auth)[1]
    job = tasks[job_id]
    assert job["name"] == "ingestion.ingest_documents[ingest_documents]"
    assert job["worker"] == worker
    assert job["args"] == f"(run={run.id}, step=ingest_documents, job={job_id}, attempt=1)"
    assert f"'tenant': '{owner.tenant_id}'" in job["kwargs"]
    coordinations = [t for t in tasks.values() if t["name"] == "orchestrator.coordinate"
                     and t["args"] == f"(run={run.id})"]
    assert coordinations, "the coordinator's wake-ups name their run"

    status, workers = get(f"{flower}/api/workers?refresh=1", auth)
    assert status == 200 and worker in workers
    consumed = {queue["name"] for queue in workers[worker]["active_queues"]}
    assert consumed == set(QUEUES)
    lengths = get(f"{flower}/api/queues/length", auth)[1]["active_queues"]
    assert {queue["name"] for queue in lengths} == set(QUEUES), "every queue is visible"

    assert get(f"{flower}/api/workers")[0] == 401
    assert get(f"{flower}/api/tasks", (USER, "wrong-password-123"))[0] == 401


def test_flower_refuses_to_start_with_a_placeholder_password() -> None:
    done = subprocess.run(flower_command(free_port()), cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False,
                          env={**os.environ, "FLOWER_BASIC_AUTH": "operator:change-me-too"})
    assert done.returncode == 2
    assert "refusing to start" in done.stderr and "placeholder" in done.stderr
