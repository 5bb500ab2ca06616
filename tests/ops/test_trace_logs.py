"""One signal through the HTTP API: the same trace_id is on the API's, the coordinator's
and the job's JSON log lines, each process logging on its own (the context travels in
Celery message headers and in the job request)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.service.apikeys import create_key
from orchestrator.service.producer import get_run
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.cli import free_port, job_status
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import scaled, wait_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def api_server(fleet: Fleet, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`uvicorn orchestrator.api:app` in its own process, its log lines in a file."""
    port, log_path = free_port(), tmp_path / "api.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "orchestrator.api:app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-access-log",
            ],
            cwd=ROOT,
            stdout=log,
            stderr=log,
            env={**os.environ, "LIFECYCLE_LOG_FORMAT": "json"},
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(
            lambda: _alive(f"{base}/healthz") or process.poll() is not None, what="the API to serve"
        )
        assert process.poll() is None, log_path.read_text()
        yield base, log_path
    finally:
        process.terminate()
        process.wait(timeout=scaled(20))


def _alive(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=scaled(2)) as response:
            return response.status == 200
    except OSError:
        return False


def json_lines(text: str) -> list[dict[str, Any]]:
    lines = []
    for line in text.splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


@pytest.mark.broker_matrix
def test_one_trace_id_from_the_api_through_the_coordinator_to_the_job(
    fleet: Fleet, api_server: tuple[str, Path]
) -> None:
    base, api_log = api_server
    coordinator = fleet.start("orchestrator")
    jobs = fleet.start("ingestion,kb_index,analysis")
    owner, _ = new_tenant()
    run = start_assessment(owner, documents=1)
    wait_for(
        lambda: get_run(owner, run.id).current_step == "wait_for_framework_selection",
        what="the framework wait",
    )
    _, key = create_key(owner.tenant_id, "user:reviewer@example.org", ["signal", "read"])
    trace = uuid.uuid4().hex

    request = urllib.request.Request(
        f"{base}/api/v1/workflows/{run.id}/signals",
        method="POST",
        data=json.dumps(
            {"type": "framework_selected", "payload": {"framework": "SCF"}, "trace_id": trace}
        ).encode(),
        headers={
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Idempotency-Key": f"framework-{run.id}",
        },
    )
    with urllib.request.urlopen(request, timeout=scaled(30)) as response:
        assert response.status == 202
        assert response.headers["X-Trace-Id"] == trace
    scope_job = f"{run.id}:create_scope:1"
    wait_for(lambda: job_status(scope_job) == "succeeded", what="the scope job")
    # The job applies its own outcome before its task finishes: wait for its last line.
    wait_for(
        lambda: any(
            e.get("job_id") == scope_job and e["message"] == "task finished"
            for e in json_lines(fleet.log_of(jobs))
        ),
        what="the job's log",
    )

    api_lines = [e for e in json_lines(api_log.read_text()) if e.get("trace_id") == trace]
    assert {"signal recorded", f"POST /api/v1/workflows/{run.id}/signals 202"} <= {
        e["message"] for e in api_lines
    }
    decided = [
        e
        for e in json_lines(fleet.log_of(coordinator))
        if e.get("trace_id") == trace and e["message"] == "signal applied"
    ]
    assert any(
        e["signal_type"] == "framework_selected"
        and e["run_id"] == str(run.id)
        and e["tenant"] == owner.tenant_id
        for e in decided
    ), decided
    job_lines = [
        e
        for e in json_lines(fleet.log_of(jobs))
        if e.get("trace_id") == trace and e.get("job_id") == scope_job
    ]
    assert {"task started", "task finished"} <= {e["message"] for e in job_lines}
    assert all(e["run_id"] == str(run.id) for e in job_lines)
    # The job's own lines name its step (it then applies its outcome, logged as decided).
    assert all(e["step"] == "create_scope" for e in job_lines if e["message"].startswith("task "))
    earlier = [
        e
        for e in json_lines(fleet.log_of(jobs))
        if e.get("job_id") == f"{run.id}:ingest_documents:1"
    ]
    assert earlier and all(e["trace_id"] == run.trace_id != trace for e in earlier), (
        "jobs before the signal carry the run's own trace"
    )
