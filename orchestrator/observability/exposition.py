"""Serving metrics: the API's /metrics body, and each worker's own HTTP port."""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest, start_http_server
from prometheus_client.registry import Collector

from orchestrator.config.settings import get_settings
from orchestrator.observability.approval_metrics import ApprovalCollector
from orchestrator.observability.metrics import process_registry
from orchestrator.observability.state_metrics import StateCollector

log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def _state_registry() -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StateCollector())
    registry.register(ApprovalCollector())
    return registry


def metrics_text(include_state: bool = True, *extra: Collector) -> bytes:
    """What this process counted, then (for the API) the fleet's state from the database
    and whatever else the caller reads at scrape time (the broker's queues)."""
    body = generate_latest(process_registry())
    if include_state:
        body += generate_latest(_state_registry())
    if extra:
        registry = CollectorRegistry(auto_describe=False)
        for collector in extra:
            registry.register(collector)
        body += generate_latest(registry)
    return body


def serve_worker_metrics() -> int | None:
    """Start the worker's metrics server when LIFECYCLE_METRICS_PORT is set."""
    port = get_settings().observability.metrics_port
    if port is None:
        return None
    start_http_server(port, registry=process_registry())
    log.info("serving metrics", extra={"port": port})
    return port


def prepare_multiprocess_dir() -> Path | None:
    """Create PROMETHEUS_MULTIPROC_DIR and empty it of an earlier run's files."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        return None
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink(missing_ok=True)
    return path
