"""An in-process Celery worker (a real worker, not eager mode) for the embedded default."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from celery import Celery
from celery.worker import WorkController
from celery.worker import state as worker_state

from orchestrator.engine.routing import QUEUES


class _Worker(WorkController):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.started = threading.Event()
        super().__init__(*args, **kwargs)

    def on_consumer_ready(self, consumer: Any) -> None:
        self.started.set()


@contextmanager
def embedded_worker(
    app: Celery, concurrency: int = 4, shutdown_timeout: float = 15.0
) -> Iterator[WorkController]:
    """Consume every queue in a thread pool inside this process until the block exits."""
    worker = _Worker(
        app=app,
        concurrency=concurrency,
        pool="threads",
        queues=list(QUEUES),
        loglevel="WARNING",
        hostname="embedded@localhost",
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
    )
    thread = threading.Thread(target=worker.start, name="embedded-worker", daemon=True)
    thread.start()
    if not worker.started.wait(timeout=30):
        raise RuntimeError("the embedded worker did not start within 30 s")
    try:
        yield worker
    finally:
        worker_state.should_terminate = 0
        thread.join(shutdown_timeout)
        worker_state.should_terminate = None
        # Stopping the consumer from another thread leaves the task pool running: wait for
        # the tasks it still runs, so none outlives the block (and its database).
        if worker.pool is not None:
            worker.pool.stop()
