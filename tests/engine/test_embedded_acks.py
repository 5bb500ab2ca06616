"""The embedded worker acknowledges a finished task at once, so a worker of one job thread
takes the next message without waiting for its loop's 2-second wait to end.

The chain runs in a fresh process: the in-memory broker's queues are class-wide, so a
worker another test left in this process could take its messages."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from tests.support.embedded import in_a_fresh_process

HOPS = 10
JOB_THREAD = "worker-embedded@localhost"
ROOT = Path(__file__).resolve().parents[2]


def test_a_one_thread_worker_takes_each_next_message_without_waiting_for_its_loop(
    tmp_path: Path,
) -> None:
    outcome = in_a_fresh_process(tmp_path, "tests.engine.test_embedded_acks", "chain")

    assert outcome["finished"], "the chain of messages did not finish"
    # Before: each hop's message waited for the loop to send the last one's acknowledgement
    # (one 2-s wait per hop, HOPS in all). Now the hops do not need the loop's waits to end.
    assert outcome["waits"] <= 2, f"the loop waited out {outcome['waits']} times for {HOPS} hops"


def chain() -> None:
    """In a fresh process: HOPS messages, each sent by the task of the one before, through
    an embedded worker of one job thread; prints how many of its loop's waits ran out."""
    from kombu.transport.virtual import base as virtual

    from orchestrator.db.migrate import upgrade
    from orchestrator.engine.celery_app import create_app
    from orchestrator.engine.routing import NOTIFICATIONS_QUEUE, ORCHESTRATOR_QUEUE, QUEUES
    from orchestrator.runtime.embedded import embedded_worker

    upgrade()
    job_queue = next(q for q in QUEUES if q not in (ORCHESTRATOR_QUEUE, NOTIFICATIONS_QUEUE))
    waits = {"count": 0}
    drain = virtual.Transport.drain_events

    def counted(self: Any, connection: Any, timeout: float | None = None) -> Any:
        try:
            return drain(self, connection, timeout=timeout)
        except TimeoutError:
            if threading.current_thread().name == JOB_THREAD:
                waits["count"] += 1
            raise

    virtual.Transport.drain_events = counted  # type: ignore[method-assign]
    app = create_app()
    # kombu's own in-memory transport, whose loop waits the whole 2 s: the embedded
    # default's waits are short (orchestrator.engine.memory_transport), which would hide a
    # late acknowledgement rather than show it.
    app.conf.broker_transport = "kombu.transport.memory:Transport"
    finished = threading.Event()

    @app.task(name="tests.hop")
    def hop(left: int) -> None:
        # Each hop sends the next only when it runs: one message at a time, as a run's
        # steps come to the job queues.
        if left:
            hop.apply_async((left - 1,), queue=job_queue)
        else:
            finished.set()

    with embedded_worker(app, concurrency=1):
        ready = waits["count"]
        hop.apply_async((HOPS,), queue=job_queue)
        ok = finished.wait(timeout=120)
        waited = waits["count"] - ready
    print(json.dumps({"finished": ok, "waits": waited}), flush=True)
