"""Counters and histograms the fleet's processes increment (prometheus_client).

Call sites use the small functions below, never the metric objects, so the names and
labels live here. Gauges of state (runs by status, open waits by age, SLA breaches,
dead letters) are read from the database at scrape time: see `state_metrics`.

Several processes: the API serves its own registry on /metrics; each worker serves its
own on LIFECYCLE_METRICS_PORT. A prefork worker's children write to
PROMETHEUS_MULTIPROC_DIR (prometheus_client's multiprocess mode) and the worker's main
process serves their sum.
"""

from __future__ import annotations

import os

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    multiprocess,
)

SIGNALS_RECORDED = Counter(
    "lifecycle_signals_recorded_total",
    "Signals written to the inbox (duplicates excluded), by type and the fate at intake.",
    ["type", "fate"],
)
SIGNALS_DECIDED = Counter(
    "lifecycle_signals_decided_total",
    "Signals the coordinator decided, by type and fate (applied, ignored, rejected, conflict).",
    ["type", "fate"],
)
TRANSITIONS = Counter(
    "lifecycle_transitions_total", "Run status changes.", ["from_status", "to_status"]
)
STEPS_ENTERED = Counter("lifecycle_steps_entered_total", "Steps entered, by step.", ["step"])
JOBS = Counter("lifecycle_jobs_total", "Job deliveries by kind and outcome.", ["kind", "outcome"])
JOB_SECONDS = Histogram(
    "lifecycle_job_duration_seconds",
    "Wall time of one job delivery, by kind and outcome.",
    ["kind", "outcome"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800),
)
QUEUE_WAIT = Histogram(
    "lifecycle_queue_wait_seconds",
    "Time a message waited in its queue before a worker started it.",
    ["queue"],
    buckets=(0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900),
)


def signal_recorded(signal_type: str, fate: str) -> None:
    SIGNALS_RECORDED.labels(signal_type, fate).inc()


def signal_decided(signal_type: str, fate: str) -> None:
    SIGNALS_DECIDED.labels(signal_type, fate).inc()


def status_changed(before: str, after: str) -> None:
    TRANSITIONS.labels(before, after).inc()


def step_entered(step: str) -> None:
    STEPS_ENTERED.labels(step).inc()


def job_finished(kind: str, outcome: str, seconds: float) -> None:
    JOBS.labels(kind, outcome).inc()
    JOB_SECONDS.labels(kind, outcome).observe(max(seconds, 0.0))


def message_waited(queue: str, seconds: float) -> None:
    QUEUE_WAIT.labels(queue).observe(max(seconds, 0.0))


def process_registry() -> CollectorRegistry:
    """What this process (and, in multiprocess mode, its siblings) counted."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return registry
