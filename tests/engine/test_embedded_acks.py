"""The embedded worker acknowledges a finished task at once, so a worker of one job thread
takes the next message without waiting for its loop's 2-second wait to end."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from kombu.transport.virtual import base as virtual

from orchestrator.engine.celery_app import create_app
from orchestrator.engine.routing import NOTIFICATIONS_QUEUE, ORCHESTRATOR_QUEUE, QUEUES
from orchestrator.runtime.embedded import embedded_worker

HOPS = 10
JOB_QUEUE = next(q for q in QUEUES if q not in (ORCHESTRATOR_QUEUE, NOTIFICATIONS_QUEUE))
JOB_THREAD = "worker-embedded@localhost"


def test_a_one_thread_worker_takes_each_next_message_without_waiting_for_its_loop(
    embedded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each time the job worker's loop waited its whole 2 s for a message it could not take.
    waits_ended = {"count": 0}
    drain = virtual.Transport.drain_events

    def counted(self: Any, connection: Any, timeout: float | None = None) -> Any:
        try:
            return drain(self, connection, timeout=timeout)
        except TimeoutError:
            if threading.current_thread().name == JOB_THREAD:
                waits_ended["count"] += 1
            raise

    monkeypatch.setattr(virtual.Transport, "drain_events", counted)
    app = create_app()
    done = threading.Event()

    @app.task(name="tests.hop")
    def hop(left: int) -> None:
        # Each hop sends the next only when it runs: one message at a time, as a run's
        # steps come to the job queues.
        if left:
            hop.apply_async((left - 1,), queue=JOB_QUEUE)
        else:
            done.set()

    with embedded_worker(app, concurrency=1):
        ready = waits_ended["count"]
        hop.apply_async((HOPS,), queue=JOB_QUEUE)
        assert done.wait(timeout=120), "the chain of messages did not finish"
        waited = waits_ended["count"] - ready

    # Before: each hop's message waited for the loop to send the last one's acknowledgement
    # (one 2-s wait per hop, HOPS in all). Now the hops do not need the loop's waits to end.
    assert waited <= 2, f"the worker's loop waited out {waited} times for {HOPS} hops"
