"""Task events that survive the threads pool.

A worker with an event loop buffers its task events and flushes them from the loop's
thread, while the pool's threads keep appending (task-started, -succeeded, -failed).
Celery 5.6's flush publishes the buffer and then empties it, dropping every event a pool
thread appended during the socket write: Flower then shows a job as received forever
(celery/celery#10434, fixed in 5.7, which this project cannot take yet: see pyproject).
This dispatcher publishes a copy and removes only what it published, as 5.7 does.
"""

from __future__ import annotations

from celery.app.events import Events
from celery.events.dispatcher import EventDispatcher


class ThreadSafeEventDispatcher(EventDispatcher):  # type: ignore[misc]
    def flush(self, errors: bool = True, groups: bool = True) -> None:
        super().flush(errors=errors, groups=False)
        if not groups:
            return
        with self.mutex:
            for group, events in self._group_buffer.items():
                if not events:
                    continue
                batch = list(events)  # a pool thread may append while this one publishes
                self._publish(batch, self.producer, f"{group}.multi")
                del events[: len(batch)]


class ThreadSafeEvents(Events):  # type: ignore[misc]
    """`app.events` with the dispatcher above (Celery(events=...))."""

    dispatcher_cls = "orchestrator.engine.task_events:ThreadSafeEventDispatcher"
