"""What each broker needs declared and configured: Redis, RabbitMQ, or the in-memory one.

On RabbitMQ (amqp://) every queue is a durable **quorum queue** (replicated by Raft on a
cluster; on one node it still survives a restart with its messages), fed by a durable
topic exchange of the queue's name. Messages are persistent and every publish waits for
the broker's **publisher confirm**, so a send that returns is on disk on the queue's
leader (and a majority of replicas); a send that fails raises, and the outbox sweep sends
the job again. Countdown retries use RabbitMQ's native delayed delivery (Celery binds
every quorum queue to its `celery_delayed_*` exchanges; a topic exchange is required).

**Acks late on both brokers.** A job's message is acknowledged after the task returned
(its outcome committed), never before. A worker that dies or loses its connection before
acknowledging gets its unacked messages re-delivered: on RabbitMQ at once, when the broker
notices the closed connection; on Redis after `visibility_timeout_s`. A re-delivered job
finds its own finished work (the jobs table) and does not redo it. RabbitMQ closes a
channel whose delivery stays unacked past its `consumer_timeout` (30 minutes by default):
every job's hard time limit is below that, so a live job is never re-delivered under it.
Quorum queues have no global QoS: the worker detects them (`worker_detect_quorum_queues`)
and uses per-consumer prefetch (one message per process, `worker_prefetch_multiplier=1`).
"""

from __future__ import annotations

from typing import Any

from kombu import Exchange, Queue

QUORUM = {"x-queue-type": "quorum"}


def is_amqp(broker_url: str) -> bool:
    return broker_url.split("://", 1)[0] in {"amqp", "amqps", "pyamqp"}


def declare_queues(broker_url: str, names: tuple[str, ...]) -> list[Queue]:
    """One queue per kind of work; quorum queues behind topic exchanges on RabbitMQ."""
    if not is_amqp(broker_url):
        return [Queue(name, routing_key=name) for name in names]
    return [
        Queue(
            name,
            Exchange(name, type="topic", durable=True),
            routing_key=name,
            durable=True,
            queue_arguments=dict(QUORUM),
        )
        for name in names
    ]


def broker_conf(broker_url: str) -> dict[str, Any]:
    """Celery settings that depend on the broker (added to the app's configuration)."""
    if not is_amqp(broker_url):
        return {}
    return {
        "task_default_queue_type": "quorum",
        "task_default_exchange_type": "topic",
        "task_create_missing_queue_type": "quorum",
        "task_default_delivery_mode": "persistent",
        "worker_detect_quorum_queues": True,
        "broker_native_delayed_delivery_queue_type": "quorum",
        # After a reconnect Celery lowers the prefetch count and raises it again from the
        # thread that acknowledges a task: with the threads pool that is a pool thread, and
        # its synchronous basic.qos reads the consumer's socket beside the event loop, which
        # then reads from mid-frame and hangs until the broker drops it for missed
        # heartbeats. Quorum queues take per-consumer QoS, where the raise is a no-op anyway
        # (celery/celery#9512): the worker would stay at the lowered count.
        "worker_enable_prefetch_count_reduction": False,
    }


def amqp_transport_options() -> dict[str, Any]:
    """Publisher confirms: `send_task` returns once the broker has the message."""
    return {"confirm_publish": True}
