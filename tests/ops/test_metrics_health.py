"""Prometheus metrics and health endpoints.

Embedded (SQLite, an in-process worker): a run's signals, transitions, jobs and queue
waits are counted, and the state gauges are read from the database. Integration (real
workers): readiness needs a worker on every queue, and a worker serves its own metrics.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from orchestrator.api import app
from orchestrator.config.settings import reset_settings
from orchestrator.contracts.errors import SignalRejected
from orchestrator.engine.messages import get_app
from orchestrator.engine.routing import QUEUES
from orchestrator.runtime.embedded import embedded_worker
from orchestrator.service.producer import get_run, send_signal
from orchestrator.service.queries import get_signal
from orchestrator.sweeps import sweep_sla
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.cli import free_port
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import scaled, wait_for

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(text: str) -> Samples:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(scraped: Samples, name: str, **labels: str) -> float:
    return scraped.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
def worker_inside(embedded: Path) -> Iterator[TestClient]:
    with embedded_worker(get_app(), concurrency=2):
        yield TestClient(app)


@pytest.fixture
def instant_sla(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every run is past its SLA."""
    monkeypatch.setenv("LIFECYCLE_SWEEP_SLA_S", "0.001")
    reset_settings()
    yield
    # The variable goes with the test's other patches, after the worker has stopped.
    reset_settings()


def test_a_run_is_counted_and_its_state_read_from_the_database(
    worker_inside: TestClient, instant_sla: None
) -> None:
    before = samples(worker_inside.get("/metrics").text)
    owner, _ = new_tenant()
    run = start_assessment(owner, documents=1)
    wait_for(
        lambda: get_run(owner, run.id).current_step == "wait_for_framework_selection",
        what="the framework wait",
    )
    with pytest.raises(SignalRejected):
        send_signal(owner, run.id, "framework_selected", "empty", payload={})
    late = send_signal(owner, run.id, "documents_uploaded", "late-upload")
    wait_for(
        lambda: get_signal(owner, run.id, late.signal_id).fate.value == "ignored",
        what="the late upload to be ignored",
    )
    assert sweep_sla() == 1

    response = worker_inside.get("/metrics")

    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    after = samples(response.text)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert (
        grew("lifecycle_signals_decided_total", type="workflow_start_requested", fate="applied")
        == 1
    )
    assert grew("lifecycle_signals_decided_total", type="documents_uploaded", fate="ignored") == 1
    assert grew("lifecycle_signals_recorded_total", type="framework_selected", fate="rejected") == 1
    for status_from, status_to in (
        ("pending", "waiting_for_input"),  # documents wait
        ("waiting_for_input", "running"),  # documents are in
        ("running", "waiting_for_input"),
    ):  # framework wait
        assert (
            grew("lifecycle_transitions_total", from_status=status_from, to_status=status_to) == 1
        ), (status_from, status_to)
    assert grew("lifecycle_steps_entered_total", step="index_kb") == 1
    for kind in ("ingest_documents", "index_kb", "analysis"):
        assert grew("lifecycle_jobs_total", kind=kind, outcome="succeeded") == 1, kind
        assert grew("lifecycle_job_duration_seconds_count", kind=kind, outcome="succeeded") == 1, (
            kind
        )
    assert grew("lifecycle_queue_wait_seconds_count", queue="ingestion") >= 1
    assert value(after, "lifecycle_runs", status="waiting_for_input") == 1
    jobs = {
        labels: count for (name, labels), count in after.items() if name == "lifecycle_jobs_current"
    }
    assert jobs == {
        (("kind", kind), ("queue", queue), ("status", "succeeded")): 1
        for kind, queue in (
            ("ingest_documents", "ingestion"),
            ("index_kb", "kb_index"),
            ("analysis", "analysis"),
        )
    }
    assert (
        value(after, "lifecycle_open_waits", step="wait_for_framework_selection", age="under_1h")
        == 1
    )
    assert value(after, "lifecycle_sla_breaches_total") == 1
    assert value(after, "lifecycle_state_scrape_ok") == 1


def test_liveness_answers_without_asking_anything(embedded: Path) -> None:
    response = TestClient(app).get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.fixture
def readiness_timeout(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("LIFECYCLE_READINESS_TIMEOUT_S", "1")
    reset_settings()
    yield
    monkeypatch.undo()
    reset_settings()


@pytest.mark.broker_matrix
@pytest.mark.allows_server_error(
    reason="before a worker starts, readiness answers 503: what the test checks",
    paths=("/readyz",),
)
def test_readiness_needs_a_worker_on_every_queue_and_workers_serve_metrics(
    fleet: Fleet, readiness_timeout: None, tmp_path: Path
) -> None:
    client = TestClient(app)

    unready = client.get("/readyz")

    assert unready.status_code == 503
    checks = unready.json()["checks"]
    assert checks["database"]["ok"] and checks["broker"]["ok"]
    assert not checks["workers"]["ok"]
    assert checks["workers"]["detail"] == f"no worker consumes {', '.join(QUEUES)}"

    # As in compose: prefork processes count into a multiprocess directory, summed by the
    # worker's main process on its metrics port.
    port = free_port()
    worker = fleet.start(
        ",".join(QUEUES),
        pool="prefork",
        concurrency=2,
        extra_env={
            "LIFECYCLE_METRICS_PORT": str(port),
            "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "m"),
        },
    )
    ready = client.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"]["workers"]["queues"] == {q: [worker] for q in QUEUES}

    owner, _ = new_tenant()
    run = start_assessment(owner, documents=1)
    wait_for(
        lambda: get_run(owner, run.id).current_step == "wait_for_framework_selection",
        what="the framework wait",
    )
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=scaled(10)) as response:
        scraped = samples(response.read().decode())
    assert value(scraped, "lifecycle_jobs_total", kind="ingest_documents", outcome="succeeded") == 1
    assert value(scraped, "lifecycle_signals_decided_total", type="kb_indexed", fate="applied") == 1


def test_queue_depth_and_the_oldest_messages_age_are_read_from_the_broker(
    embedded: Path,
) -> None:
    from orchestrator.engine.coordinator import coordinate
    from tests.support.sweeps import start_run

    client = TestClient(app)
    before = samples(client.get("/metrics").text)
    owner, _ = new_tenant()
    for _ in range(3):  # no worker consumes: each ingestion job's message waits
        coordinate(start_run(owner))
    after = samples(client.get("/metrics").text)

    waiting = value(after, "lifecycle_queue_messages", queue="ingestion")
    assert waiting - value(before, "lifecycle_queue_messages", queue="ingestion") == 3
    assert value(after, "lifecycle_queue_oldest_message_age_seconds", queue="ingestion") > 0
    assert value(after, "lifecycle_queue_messages", queue="reporting") == 0
    assert value(after, "lifecycle_queue_oldest_message_age_seconds", queue="reporting") == 0
    assert value(after, "lifecycle_broker_scrape_ok") == 1
