"""Every metric the product defines fits in one Prometheus registry and its scrape parses
with each family once: a name used twice (the gauge `lifecycle_jobs` beside the counter
`lifecycle_jobs_total`, whose family is `lifecycle_jobs`) makes one family appear twice,
which Prometheus rejects."""

from __future__ import annotations

import uuid
from pathlib import Path

from fastapi.testclient import TestClient
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

from orchestrator.api import app
from orchestrator.engine.messages import get_app
from orchestrator.engine.routing import QUEUES
from orchestrator.observability import metrics
from orchestrator.observability.approval_metrics import ApprovalCollector
from orchestrator.observability.queue_metrics import QueueCollector
from orchestrator.observability.state_metrics import StateCollector


def product_collectors() -> list[Collector]:
    """The counters and histograms the processes increment, and every collector read at
    scrape time (database state, approvals, the broker's queues)."""
    counted = [m for m in vars(metrics).values() if isinstance(m, MetricWrapperBase)]
    assert len(counted) >= 6
    return [*counted, StateCollector(), ApprovalCollector(), QueueCollector(get_app, QUEUES)]


def test_every_metric_registers_in_one_registry_and_parses(embedded: Path) -> None:
    registry = CollectorRegistry()  # describes each collector: a name taken twice raises
    for collector in product_collectors():
        registry.register(collector)
    families = list(text_string_to_metric_families(generate_latest(registry).decode()))
    names = [f.name for f in families]
    assert len(names) == len(set(names)), names
    up = {f.name: f.samples[0].value for f in families if f.name.endswith("_scrape_ok")}
    # Each scrape-time source answered, so its families were all read and registered.
    assert up == {
        "lifecycle_state_scrape_ok": 1,
        "lifecycle_approval_scrape_ok": 1,
        "lifecycle_broker_scrape_ok": 1,
    }
    assert {"lifecycle_jobs", "lifecycle_jobs_current", "lifecycle_runs"} <= set(names)
    kinds = {f.name: f.type for f in families}
    assert (kinds["lifecycle_jobs"], kinds["lifecycle_jobs_current"]) == ("counter", "gauge")


def test_the_api_metrics_page_parses_with_each_family_once(embedded: Path) -> None:
    response = TestClient(app).get("/metrics")
    assert response.status_code == 200, response.text
    families = list(text_string_to_metric_families(response.text))
    names = [f.name for f in families]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert "lifecycle_jobs_current" in names


def _requests(text: str, handler: str, method: str, status: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if sample.name == "http_requests_total" and (
                labels.get("handler"),
                labels.get("method"),
                labels.get("status"),
            ) == (handler, method, status):
                return float(sample.value)
    return 0.0


def test_http_requests_are_counted_by_route_template_and_status_class(embedded: Path) -> None:
    client = TestClient(app)
    route = "/api/v1/workflows/{workflowRunId}"
    before = client.get("/metrics").text
    missing = f"/api/v1/workflows/{uuid.uuid4()}"
    for _ in range(3):  # unauthenticated: 401, counted under the route, not the id
        assert client.get(missing).status_code == 401
    after = client.get("/metrics").text
    assert _requests(after, route, "GET", "4xx") - _requests(before, route, "GET", "4xx") == 3
    assert not any(str(uuid.UUID(missing.rsplit("/", 1)[1])) in line for line in after.splitlines())
    assert _requests(after, "/metrics", "GET", "2xx") == 0  # the scrape is not counted
    durations = [
        f
        for f in text_string_to_metric_families(after)
        if f.name.startswith("http_request_duration")
    ]
    assert durations
