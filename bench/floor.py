"""The floor: bare Celery ping-pong on the fleet's broker and settings, no orchestration.

`celery -A bench.floor worker -Q floor_a` and `-Q floor_b`: hop k runs on one queue and
sends hop k+1 to the other, like a job completion waking the coordinator and the
coordinator dispatching the next job. Each hop pushes its latency (send -> start) to Redis.
Settings mirror orchestrator.celery_app (JSON, late acks, prefetch 1, the same Redis
transport options, task events on) without the fleet's tasks and signal hooks.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import redis
from celery import Celery, shared_task
from kombu import Queue

from orchestrator.settings import get_settings

QUEUES = ("floor_a", "floor_b")
HOP_TASK = "bench.floor.hop"
LATENCY_KEY = "bench:floor:latency_ms"
DONE_KEY = "bench:floor:done"


@lru_cache(maxsize=1)
def get_floor_app() -> Celery:
    settings = get_settings()
    app = Celery("floor", broker=settings.broker_url)
    app.conf.update(
        task_serializer="json", result_serializer="json", accept_content=["json"],
        event_serializer="json", task_ignore_result=True, result_backend=None,
        task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
        task_default_queue=QUEUES[0],
        task_queues=[Queue(name, routing_key=name) for name in QUEUES],
        task_send_sent_event=True, worker_send_task_events=True,
        broker_transport_options={
            "visibility_timeout": settings.visibility_timeout_s,
            "unacked_restore_interval": settings.unacked_restore_interval_s,
            "unacked_restore_throttle": 1,
        },
        broker_connection_retry_on_startup=True, enable_utc=True)
    return app


def __getattr__(name: str) -> Any:
    # `celery -A bench.floor` finds the app here; built lazily, after the environment is set.
    if name == "app":
        return get_floor_app()
    raise AttributeError(name)


@lru_cache(maxsize=1)
def _results() -> redis.Redis:
    return redis.Redis.from_url(get_settings().broker_url)


def send_hop(chain: str, hop: int, hops: int) -> None:
    get_floor_app().send_task(HOP_TASK, args=[chain, hop, hops, time.time()],
                  queue=QUEUES[hop % 2])


@shared_task(name=HOP_TASK, acks_late=True, ignore_result=True)
def hop(chain: str, number: int, hops: int, sent_at: float) -> None:
    latency_ms = (time.time() - sent_at) * 1000
    if number < hops:
        send_hop(chain, number + 1, hops)
    pipe = _results().pipeline(transaction=False)
    pipe.rpush(LATENCY_KEY, f"{latency_ms:.3f}")
    if number == hops:
        pipe.rpush(DONE_KEY, chain)
    pipe.execute()
