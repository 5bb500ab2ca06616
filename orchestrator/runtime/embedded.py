"""An in-process Celery worker (a real worker, not eager mode) for the embedded default."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from celery import Celery
from celery import _state as celery_state
from celery.worker import WorkController
from celery.worker import state as worker_state
from celery.worker.consumer import Consumer

from orchestrator.engine.routing import NOTIFICATIONS_QUEUE, ORCHESTRATOR_QUEUE, QUEUES
from orchestrator.runtime import registrations as _registrations  # noqa: F401 (handlers)

log = logging.getLogger(__name__)


class ImmediateAckConsumer(Consumer):
    """A consumer that acknowledges a finished task at once, from the thread that ran it.

    Without an event loop (the in-memory transport has none) Celery queues a thread's
    acknowledgement until its loop's 2-second wait for messages ends, and until then the
    task's prefetch slot stays taken: a worker of one job thread took a job only every
    2 s. The in-memory transport's acknowledgement is a set insert (kombu's virtual QoS),
    safe from any thread, so nothing needs to wait for the loop.
    """

    def call_soon(self, p: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self.hub is not None:
            return super().call_soon(p, *args, **kwargs)
        try:
            p(*args, **kwargs)
        except Exception:  # the loop would have logged it and gone on
            log.exception("a consumer operation failed")
        return p


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
    """Consume every queue in thread pools inside this process until the block exits.

    Coordination (signals, sweeps, webhooks) has a pool of its own: a person's decision is
    applied at once, not after whatever jobs hold the job threads."""
    coordination = (ORCHESTRATOR_QUEUE, NOTIFICATIONS_QUEUE)
    # The tasks are shared tasks: in a job thread `task.app` is Celery's current app, which
    # falls back to the default one (no broker: amqp://localhost). A `celery worker`
    # process makes its app the default; so must this one, or a job's retry is published
    # to a broker nobody here consumes, and lost. Only while it runs: a process's later
    # apps (another test's, another environment's) are not left with this one.
    previous = celery_state.default_app
    app.set_default()
    workers = [
        _start(app, 2, list(coordination), "embedded-coordinator@localhost"),
        _start(
            app, concurrency, [q for q in QUEUES if q not in coordination], "embedded@localhost"
        ),
    ]
    try:
        yield workers[1][0]
    finally:
        worker_state.should_terminate = 0
        for _, thread in workers:
            thread.join(shutdown_timeout)
        worker_state.should_terminate = None
        # Stopping a consumer from another thread leaves its task pool running: wait for
        # the tasks it still runs, so none outlives the block (and its database).
        for worker, _ in workers:
            if worker.pool is not None:
                worker.pool.stop()
        celery_state.set_default_app(previous)


def _start(
    app: Celery, concurrency: int, queues: list[str], hostname: str
) -> tuple[_Worker, threading.Thread]:
    worker = _Worker(
        app=app,
        concurrency=concurrency,
        pool="threads",
        queues=queues,
        loglevel="WARNING",
        hostname=hostname,
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
        consumer_cls=ImmediateAckConsumer,
    )
    thread = threading.Thread(target=worker.start, name=f"worker-{hostname}", daemon=True)
    thread.start()
    if not worker.started.wait(timeout=30):
        raise RuntimeError(f"the embedded worker {hostname} did not start within 30 s")
    return worker, thread
