"""What Flower (or any event consumer) learns about each message.

- Job and coordinator messages announce themselves when published (`task-sent`), so a
  message waiting in a queue no worker consumes shows as PENDING (queued) at once. The
  announcement carries the shadow name (`ingestion.ingest_documents[ingest_documents]`),
  the same name the worker's own events carry, so a task keeps one name in Flower.
- Sweeps announce nothing, neither when beat publishes them nor from the worker (their
  tasks set `send_events=False`): beat sends about 17,900 of them a day, and Flower keeps
  only its `max_tasks` most recent tasks, so sweeps would push the jobs out of its history.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from celery.app.amqp import AMQP


@lru_cache(maxsize=1)
def quiet_tasks() -> frozenset[str]:
    """Tasks that send no events: the periodic sweeps of the beat schedule."""
    from orchestrator.engine.schedule import sweep_tasks

    return sweep_tasks()


class MonitoredAMQP(AMQP):  # type: ignore[misc]
    """Celery's message factory, deciding each message's `task-sent` event."""

    def as_task_v2(self, task_id: str, name: str, *args: Any, **kwargs: Any) -> Any:
        message = super().as_task_v2(task_id, name, *args, **kwargs)
        if message.sent_event is None:
            return message
        if name in quiet_tasks():
            return message._replace(sent_event=None)
        shadow = message.headers.get("shadow")
        if shadow:
            message.sent_event["name"] = shadow
        return message
