"""A task event a pool thread buffers while the loop's thread flushes is sent, not lost
(the Flower view of a threads-pool worker: received, then started, then failed)."""

from __future__ import annotations

from typing import Any

from celery.events.dispatcher import EventDispatcher
from kombu import Connection

from orchestrator.engine.celery_app import create_app
from orchestrator.engine.task_events import ThreadSafeEventDispatcher


def _flush_while_a_pool_thread_sends(base: type[EventDispatcher]) -> list[str]:
    """Flush a buffered task-received; while it is being written, a pool thread buffers
    task-started. Returns the event types published, after a second flush."""
    published: list[str] = []

    class Recording(base):  # type: ignore[misc, valid-type]
        def _publish(self, event: Any, producer: Any, routing_key: str, **_: Any) -> None:
            published.extend(e["type"] for e in event)
            if event and event[0]["type"] == "task-received":
                self.send("task-started", uuid="job-1")  # the other thread, mid-write

    with Connection("memory://") as connection:
        dispatcher = Recording(connection, hostname="w@test", buffer_group=["task"])
        dispatcher.send("task-received", uuid="job-1")
        dispatcher.flush()
        dispatcher.flush()
    return published


def test_an_event_buffered_during_a_flush_is_sent_by_the_next_one() -> None:
    assert _flush_while_a_pool_thread_sends(ThreadSafeEventDispatcher) == [
        "task-received",
        "task-started",
    ]


def test_celerys_own_dispatcher_still_loses_it() -> None:
    """Why the override exists. When this fails, Celery flushes safely itself (5.7 does):
    drop orchestrator.engine.task_events."""
    assert _flush_while_a_pool_thread_sends(EventDispatcher) == ["task-received"]


def test_the_app_dispatches_task_events_with_it() -> None:
    assert issubclass(create_app().events.Dispatcher, ThreadSafeEventDispatcher)
