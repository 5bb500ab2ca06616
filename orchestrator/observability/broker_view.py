"""What the broker holds right now: which job messages wait in a queue, how deep each queue
is and how old its oldest message, and which messages live workers hold (which queues they
consume is orchestrator/engine/consumers.py's).

The database says which jobs are queued; only the broker can say whether their messages
still exist (a Redis restarted empty, a FLUSHALL, a failover, or a process that died
between its commit and its send all lose them without a trace in the database). Redis and
the in-memory transport can be read without consuming anything; AMQP can only count.

Queues are read from the oldest end in chunks, and a search stops once every wanted id is
found: checking the oldest queued jobs of a queue 10,000 deep reads one chunk, not 10,000.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from celery import Celery

log = logging.getLogger(__name__)

#: The header every job message carries: when it was sent (epoch seconds).
SENT_AT_HEADER = "lifecycle_sent_at"
CHUNK = 500
#: Consecutive chunks overlap: a worker popping messages between two reads shifts the
#: list toward its right end, and an overlap keeps a shifted message from being skipped.
OVERLAP = 100


@dataclass(frozen=True)
class QueueDepth:
    queue: str
    messages: int
    oldest_age_s: float | None
    """Age of the oldest message waiting (of each priority step's next in line), when the
    broker can show it and it says when it was sent; None for an empty queue or a broker
    that can only count."""


@dataclass(frozen=True)
class WorkerHoldings:
    """What the live workers answered: the messages they hold (reserved or running)."""

    task_ids: frozenset[str]
    workers: int


class BrokerView:
    """Reads the broker of `app` (never consumes or changes a message)."""

    def __init__(self, app: Celery) -> None:
        self.app = app

    def present(self, queue: str, wanted: Iterable[str]) -> set[str] | None:
        """The ids among `wanted` whose messages wait in `queue`; None when this broker
        cannot list a queue's messages (AMQP)."""
        with self.app.connection_for_write() as connection:
            return present_in(connection.default_channel, queue, wanted)

    def depth(self, queue: str) -> QueueDepth:
        with self.app.connection_for_write() as connection:
            return queue_depth(connection.default_channel, queue)

    def holdings(self, timeout_s: float = 1.0, *, running: bool = True) -> WorkerHoldings:
        """Ask every live worker which messages it holds: reserved, and running unless
        `running` is False. Raises when the broker does not answer; no reply means no live
        worker."""
        inspect = self.app.control.inspect(timeout=timeout_s)
        replies = [inspect.active() or {}] if running else []
        replies.append(inspect.reserved() or {})
        ids = {
            task["id"]
            for reply in replies
            for tasks in reply.values()
            for task in tasks or ()
            if isinstance(task, dict) and "id" in task
        }
        workers = set().union(*(set(reply) for reply in replies))
        return WorkerHoldings(frozenset(ids), len(workers))


def present_in(channel: Any, queue: str, wanted: Iterable[str]) -> set[str] | None:
    wanted = set(wanted)
    messages = _oldest_first(channel, queue)
    if messages is None:
        return None
    found: set[str] = set()
    for message in messages:
        task_id = _task_id(message)
        if task_id in wanted:
            found.add(task_id)
            if len(found) == len(wanted):
                break
    return found


def queue_depth(channel: Any, queue: str) -> QueueDepth:
    count = _count(channel, queue)
    sent = [at for head in (_heads(channel, queue) if count else []) if (at := _sent_at(head))]
    oldest = max(time.time() - min(sent), 0.0) if sent else None
    return QueueDepth(queue, count, oldest)


def _heads(channel: Any, queue: str) -> list[Any]:
    """The next message of each priority step (Redis keeps a tenant's backlog at a later
    step than other tenants' first messages: tenant_order.py), or of the queue."""
    if hasattr(channel, "_q_for_pri") and hasattr(channel, "client"):
        keys = [channel._q_for_pri(queue, priority) for priority in channel.priority_steps]
        return [head for key in keys if (head := channel.client.lindex(key, -1)) is not None]
    messages = _oldest_first(channel, queue, chunk=1)
    head = next(iter(messages), None) if messages is not None else None
    return [head] if head is not None else []


def _count(channel: Any, queue: str) -> int:
    if hasattr(channel, "_size"):  # Redis and the in-memory transport
        return int(channel._size(queue))
    try:
        declared = channel.queue_declare(queue=queue, passive=True)
    except Exception:  # not declared yet: nothing waits in it
        log.debug("queue %s is not declared", queue, exc_info=True)
        return 0
    return int(declared.message_count)


def _oldest_first(channel: Any, queue: str, chunk: int = CHUNK) -> Iterable[Any] | None:
    if hasattr(channel, "_q_for_pri") and hasattr(channel, "client"):
        return _redis_oldest_first(channel, queue, chunk)
    queues = getattr(channel, "queues", None)
    if isinstance(queues, dict):  # kombu's in-memory transport: one process-wide state
        waiting = queues.get(queue)
        return list(waiting.queue) if waiting is not None else []
    return None


def _redis_oldest_first(channel: Any, queue: str, chunk: int) -> Iterator[Any]:
    """kombu LPUSHes and BRPOPs: the oldest message is at the right end of each list (one
    list per priority step, the highest priority read first)."""
    client = channel.client
    for priority in channel.priority_steps:
        key = channel._q_for_pri(queue, priority)
        end = -1
        while True:
            raw = client.lrange(key, end - chunk + 1, end)
            yield from reversed(raw)
            if len(raw) < chunk:
                break
            end -= max(chunk - OVERLAP, 1)


def _decoded(message: Any) -> dict[str, Any] | None:
    if isinstance(message, dict):
        return message
    try:
        decoded = json.loads(message)
    except (TypeError, ValueError):
        return None
    return decoded if isinstance(decoded, dict) else None


def _headers(message: Any) -> dict[str, Any]:
    decoded = _decoded(message)
    headers = decoded.get("headers") if decoded is not None else None
    return headers if isinstance(headers, dict) else {}


def _task_id(message: Any) -> str | None:
    task_id = _headers(message).get("id")
    return task_id if isinstance(task_id, str) else None


def _sent_at(message: Any) -> float | None:
    sent_at = _headers(message).get(SENT_AT_HEADER)
    return float(sent_at) if isinstance(sent_at, int | float) else None
