"""The floor: bare Celery ping-pong on the fleet's broker and settings, no orchestration.

`celery -A bench.compare.floor_app worker -Q floor_a` and `-Q floor_b`: hop k runs on one queue and
sends hop k+1 to the other, like a job completion waking the coordinator and the
coordinator dispatching the next job. Each hop pushes its latency (send -> start) to Redis.
Its Celery settings are the fleet app's own (every one that differs from Celery's
default, routing aside), without the fleet's tasks and signal hooks.
"""

from __future__ import annotations

import json
import os
import time
from functools import lru_cache
from typing import Any

import redis
from celery import Celery, shared_task
from kombu import Queue

from orchestrator.config.settings import get_settings

QUEUES = ("floor_a", "floor_b")
HOP_TASK = "bench.compare.floor_app.hop"
LATENCY_KEY = "bench:floor:latency_ms"
DONE_KEY = "bench:floor:done"


#: Set by the benchmark for the floor's workers: the fleet's settings, as JSON.
SETTINGS_ENV = "LIFECYCLE_BENCH_FLOOR_CELERY"
#: Routing, schedules and task modules are the fleet's own business, not the broker's.
_NOT_MIRRORED = frozenset(
    {
        "include",
        "imports",
        "beat_schedule",
        "task_queues",
        "task_routes",
        "task_default_queue",
        "broker_url",
    }
)


def fleet_settings() -> dict[str, Any]:
    """Every Celery setting of the fleet's app that differs from Celery's default, routing
    aside: serializers, late acks, prefetch, transport options, events."""
    from orchestrator.engine.messages import get_app

    fleet, bare = get_app().conf, Celery("bare", set_as_current=False).conf
    mirrored: dict[str, Any] = {}
    for key in fleet:
        if key in _NOT_MIRRORED:
            continue
        try:
            value = fleet[key]
            if value == bare[key]:
                continue
            json.dumps(value)
        except (TypeError, ValueError, KeyError):  # not a plain setting: not the broker's
            continue
        mirrored[key] = value
    return mirrored


@lru_cache(maxsize=1)
def get_floor_app() -> Celery:
    raw = os.environ.get(SETTINGS_ENV)
    mirrored = json.loads(raw) if raw else fleet_settings()
    app = Celery("floor", broker=get_settings().broker_url)
    app.conf.update(
        task_default_queue=QUEUES[0],
        task_queues=[Queue(name, routing_key=name) for name in QUEUES],
        **mirrored,
    )
    return app


def __getattr__(name: str) -> Any:
    # `celery -A bench.compare.floor_app` finds the app here; built lazily, once the
    # environment is set.
    if name == "app":
        return get_floor_app()
    raise AttributeError(name)


@lru_cache(maxsize=1)
def _results() -> redis.Redis:
    return redis.Redis.from_url(get_settings().broker_url)


def send_hop(chain: str, hop: int, hops: int) -> None:
    get_floor_app().send_task(HOP_TASK, args=[chain, hop, hops, time.time()], queue=QUEUES[hop % 2])


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
