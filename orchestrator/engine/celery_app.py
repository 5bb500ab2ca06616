"""The Celery app: JSON only, late acks, one queue per kind of work (on RabbitMQ: quorum
queues and publisher confirms, orchestrator.engine.broker_topology)."""

from __future__ import annotations

from typing import Any

from celery import Celery

from orchestrator.config.settings import Settings, get_settings
from orchestrator.engine import memory_transport, redis_transport
from orchestrator.engine.broker_topology import (
    amqp_transport_options,
    broker_conf,
    declare_queues,
    is_amqp,
)
from orchestrator.engine.routing import COORDINATE_TASK, ORCHESTRATOR_QUEUE, QUEUES, ROUTES
from orchestrator.engine.schedule import build_schedule
from orchestrator.observability import celery_hooks

TASK_MODULES = (
    "orchestrator.runtime.tasks",
    "workers.ingestion.tasks",
    "workers.kb_index.tasks",
    "workers.analysis.tasks",
    "workers.reporting.tasks",
)


def _transport_options(settings: Settings) -> dict[str, Any]:
    if settings.is_embedded_broker:
        # The in-memory transport polls; keep hops short for the embedded fleet.
        return {"polling_interval": 0.005}
    if is_amqp(settings.broker_url):
        return amqp_transport_options()
    return {
        # Must exceed the longest job's hard time limit, or Redis re-delivers a live job.
        "visibility_timeout": settings.visibility_timeout_s,
        "unacked_restore_interval": settings.unacked_restore_interval_s,
        "unacked_restore_throttle": 1,
    }


def create_app(settings: Settings | None = None) -> Celery:
    settings = settings or get_settings()
    redis_transport.install()  # one Redis client per channel, not one per command
    app = Celery(
        "orchestrator",
        broker=settings.broker_url,
        include=list(TASK_MODULES),
        amqp="orchestrator.engine.monitoring:MonitoredAMQP",
        events="orchestrator.engine.task_events:ThreadSafeEvents",
    )
    celery_hooks.install()  # trace context in headers, JSON logs, task metrics
    routes: dict[str, dict[str, str]] = {r.task_name: {"queue": r.queue} for r in ROUTES.values()}
    routes[COORDINATE_TASK] = {"queue": ORCHESTRATOR_QUEUE}
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        event_serializer="json",
        task_ignore_result=True,  # the database is the record of state, never the backend
        result_backend=None,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=ORCHESTRATOR_QUEUE,
        task_queues=declare_queues(settings.broker_url, QUEUES),
        task_routes=routes,
        # Publishers announce each message (task-sent), so a job queued with no consumer
        # shows in Flower as queued; workers report received/started/succeeded/failed.
        # Sweeps send neither (orchestrator.engine.monitoring). `track_started`
        # would only write to the result backend, which is not used.
        task_send_sent_event=True,
        worker_send_task_events=True,
        broker_transport_options=_transport_options(settings),
        broker_connection_retry_on_startup=True,
        enable_utc=True,
        beat_schedule=build_schedule(),
    )
    app.conf.update(broker_conf(settings.broker_url))  # quorum queues on RabbitMQ
    if settings.is_embedded_broker:
        app.conf.broker_transport = memory_transport.SHORT_WAIT  # stops at once
    return app
