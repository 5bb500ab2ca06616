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
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.engine.messages import get_app
from orchestrator.engine.routing import COORDINATE_TASK, ORCHESTRATOR_QUEUE, QUEUES
from orchestrator.service.documents import upload_document
from orchestrator.service.operations import cancel_run
from orchestrator.service.producer import create_assessment, get_run, start_lifecycle
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.cli import free_port, give_up_on, job_status
from tests.support.documents import image_only_pdf
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import poll, scaled, wait_for

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "orchestrator" / "runtime" / "flowerconfig.py"
USER, PASSWORD = "operator", "Flower-test-7f3a91c2d4"


def flower_command(port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "orchestrator",
        "flower",
        f"--conf={CONF}",
        f"--port={port}",
        "--address=127.0.0.1",
    ]


def get(url: str, credentials: tuple[str, str] | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url)
    if credentials is not None:
        token = base64.b64encode(":".join(credentials).encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=scaled(10)) as response:
            body = response.read()
            return response.status, json.loads(body) if body[:1] in (b"{", b"[") else body
    except urllib.error.HTTPError as error:
        return error.code, None


@pytest.fixture
def flower(fleet: Fleet, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = (tmp_path / "flower.log").open("wb")
    process = subprocess.Popen(
        flower_command(port),
        cwd=ROOT,
        stdout=log,
        stderr=log,
        env={**os.environ, "FLOWER_BASIC_AUTH": f"{USER}:{PASSWORD}"},
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def started() -> bool:
            assert process.poll() is None, (tmp_path / "flower.log").read_text()
            return _answers(f"{base}/healthcheck")

        poll(started, bool, timeout_s=60, what="Flower to start", interval_s=0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=scaled(20))


def _answers(url: str) -> bool:
    try:
        return get(url)[0] == 200
    except OSError:
        return False


def listening(flower: str, worker: str) -> None:
    """Flower keeps only the events it receives: wait until it has the worker's own (its
    heartbeat), so the tasks that follow are not sent before Flower listens."""

    def heard() -> bool:
        status, body = get(f"{flower}/workers?json=1", (USER, PASSWORD))
        return status == 200 and any(w.get("hostname") == worker for w in body["data"])

    wait_for(heard, what="Flower to receive the worker's events")


def test_flower_shows_workers_queues_and_tasks_of_a_run(fleet: Fleet, flower: str) -> None:
    worker = fleet.start(",".join(QUEUES))
    listening(flower, worker)
    owner, _ = new_tenant()
    run = start_assessment(owner, documents=1)
    wait_for(
        lambda: get_run(owner, run.id).current_step == "wait_for_framework_selection",
        what="the framework wait",
    )
    auth = (USER, PASSWORD)
    job_id = f"{run.id}:ingest_documents:1"

    def job_seen() -> bool:
        status, tasks = get(f"{flower}/api/tasks", auth)
        return status == 200 and tasks.get(job_id, {}).get("state") == "SUCCESS"

    wait_for(job_seen, what="Flower to see the ingestion job")
    tasks = get(f"{flower}/api/tasks", auth)[1]
    job = tasks[job_id]
    assert job["started"] is not None, "every event of the job arrives"
    assert job["name"] == "ingestion.ingest_documents[ingest_documents]"
    assert job["worker"] == worker
    assert job["args"] == f"(run={run.id}, step=ingest_documents, job={job_id}, attempt=1)"
    assert f"'tenant': '{owner.tenant_id}'" in job["kwargs"]
    coordinations = [
        t
        for t in tasks.values()
        if t["name"] == "orchestrator.coordinate" and t["args"] == f"(run={run.id})"
    ]
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
    done = subprocess.run(
        flower_command(free_port()),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
        env={**os.environ, "FLOWER_BASIC_AUTH": "operator:change-me-too"},
    )
    assert done.returncode == 2
    assert "refusing to start" in done.stderr and "placeholder" in done.stderr


@pytest.mark.broker_matrix
def test_flower_sees_a_failed_job_fail_a_queued_job_wait_and_no_sweeps(
    fleet: Fleet, flower: str
) -> None:
    """A job that fails for good is a FAILURE (and counts as failed for its worker); a job
    whose queue no worker consumes is listed as queued; a sweep leaves no trace."""
    worker = fleet.start("orchestrator,ingestion")  # nobody consumes kb_index
    listening(flower, worker)
    owner, _ = new_tenant()
    auth = (USER, PASSWORD)
    scanned = create_assessment(owner, "org-1", "Only a scan")
    upload_document(owner, scanned.id, "scan.pdf", image_only_pdf())
    doomed = start_lifecycle(owner, scanned.id, idempotency_key=f"start-{scanned.id}")
    readable = start_assessment(owner, documents=1)

    def task(task_id: str) -> dict[str, Any]:
        status, tasks = get(f"{flower}/api/tasks", auth)
        return dict(tasks.get(task_id, {})) if status == 200 else {}

    failed_id = f"{doomed.id}:ingest_documents:1"
    wait_for(
        lambda: task(failed_id).get("state") == "FAILURE",
        what="Flower to see the scan's ingestion fail",
    )
    failed = task(failed_id)
    assert failed["name"] == "ingestion.ingest_documents[ingest_documents]"
    assert failed["started"] is not None, "no event of the worker's is lost (threads pool)"
    assert (
        "JobFailedForGood" in failed["exception"] and "no_extractable_text" in failed["exception"]
    )
    assert get_run(owner, doomed.id).current_step == "wait_for_documents", (
        "the durable outcome is the same: the run waits for a readable document"
    )
    status, counters = get(f"{flower}/workers?json=1", auth)
    [ours] = [w for w in counters["data"] if w["hostname"] == worker]
    assert ours.get("task-failed", 0) >= 1, "the worker's Failed count includes the job"

    queued_id = f"{readable.id}:index_kb:1"
    try:
        wait_for(
            lambda: task(queued_id).get("state") == "PENDING",
            what="Flower to list the index job nobody consumes",
        )
        queued = task(queued_id)
    finally:  # the waiting job is this test's: later tests' workers must not run it
        cancel_run(owner, readable.id, reason="test over", idempotency_key="test-over")
        with get_app().connection_for_write() as connection:
            connection.default_channel.queue_purge("kb_index")
    assert (queued["name"], queued.get("worker")) == ("kb_index.index_kb[index_kb]", None), queued
    assert queued["routing_key"] == "kb_index", "Flower names the queue it waits in"
    assert queued["args"] == f"(run={readable.id}, step=index_kb, job={queued_id}, attempt=1)"

    sweep_id = f"sweep-{uuid.uuid4()}"
    get_app().send_task("orchestrator.sweep_inbox", task_id=sweep_id, queue="orchestrator")
    wait_for(
        lambda: f'"task_id": "{sweep_id}"' in fleet.log_of(worker),
        what="the worker to run the sweep",
    )
    marker_id = f"marker-{uuid.uuid4()}"
    get_app().send_task(
        COORDINATE_TASK, args=[str(uuid.uuid4())], task_id=marker_id, queue=ORCHESTRATOR_QUEUE
    )
    # Any event of the marker (received first) comes after where the sweep's own events
    # would stand in the worker's event stream: once Flower shows the marker, it has read
    # past the sweep.
    wait_for(lambda: task(marker_id) != {}, what="Flower to see a wake-up sent after the sweep")
    assert task(sweep_id) == {}, "a sweep sends no task events"


@pytest.mark.broker_matrix
def test_a_stale_message_of_a_dead_lettered_or_cancelled_job_is_no_success(
    fleet: Fleet, flower: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two index jobs wait in a queue nobody consumes: one is given up on by the lost-jobs
    sweep, the other's run is cancelled. A worker for that queue then consumes both stale
    messages: Flower shows the first FAILURE (it had failed, and why) and the second
    REVOKED, never SUCCESS; neither job's row changes."""
    worker = fleet.start("orchestrator,ingestion")  # nobody consumes kb_index yet
    listening(flower, worker)
    owner, _ = new_tenant()
    auth = (USER, PASSWORD)
    lost, cancelled = start_assessment(owner, documents=1), start_assessment(owner, documents=1)
    lost_job, cancelled_job = f"{lost.id}:index_kb:1", f"{cancelled.id}:index_kb:1"
    wait_for(
        lambda: job_status(lost_job) == job_status(cancelled_job) == "queued",
        what="both index jobs queued",
    )
    cancel_run(owner, cancelled.id, reason="scope changed", idempotency_key="cancel-stale")
    wait_for(lambda: job_status(cancelled_job) == "cancelled", what="the cancel to apply")

    letter = give_up_on(lost.id, monkeypatch)
    wait_for(lambda: get_run(owner, lost.id).status == "failed", what="the run to fail")

    fleet.start("kb_index")  # consumes both stale messages

    def task(task_id: str) -> dict[str, Any]:
        status, tasks = get(f"{flower}/api/tasks", auth)
        return dict(tasks.get(task_id, {})) if status == 200 else {}

    wait_for(
        lambda: task(lost_job).get("state") in ("SUCCESS", "FAILURE"),
        what="Flower to see the dead-lettered job's stale delivery end",
    )
    failed = task(lost_job)
    assert failed["state"] == "FAILURE", failed
    assert f"job {lost_job} had already failed: job_lost: " in failed["exception"], failed
    assert "JobAlreadyFailed" in failed["exception"]
    wait_for(
        lambda: task(cancelled_job).get("state") in ("SUCCESS", "FAILURE", "REVOKED"),
        what="Flower to see the cancelled job's stale delivery end",
    )
    revoked = task(cancelled_job)
    assert revoked["state"] == "REVOKED", revoked
    assert "cancelled with its run: scope changed" in revoked["exception"], revoked

    assert (job_status(lost_job), job_status(cancelled_job)) == ("failed", "cancelled")
    assert get_run(owner, cancelled.id).status == "cancelled"
    assert letter.reason.startswith(
        f"job {lost_job} lost: no worker consumes queue 'kb_index' (no outcome or heartbeat"
    ), letter.reason
    assert letter.reason in failed["exception"], "Flower names why the job had failed"
