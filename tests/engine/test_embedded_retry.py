"""A job retried on the embedded worker comes back to it. The fleet's tasks are shared
tasks: in a job thread `task.app` is Celery's current app, and before the embedded worker
made its app the default one, a retry (a job's "database is locked", for one) was published
through Celery's fallback app to amqp://localhost, where nobody here consumes, and the run
waited for it for ever.

It runs in a fresh process: the in-memory broker's queues are class-wide, so a worker
another test left in this process could take its messages."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from celery import shared_task

from tests.support.embedded import in_a_fresh_process
from tests.support.polling import scaled

ROOT = Path(__file__).resolve().parents[2]
RETRIES = 2
_done = threading.Event()
_seen: list[tuple[int, str | None]] = []


@shared_task(bind=True, name="tests.retried_twice", max_retries=RETRIES)
def retried_twice(self) -> None:  # type: ignore[no-untyped-def]
    _seen.append((self.request.retries, self.app.conf.broker_url))
    if self.request.retries < RETRIES:
        raise self.retry(countdown=0.1)
    _done.set()


def test_a_retried_job_comes_back_to_the_embedded_worker(tmp_path: Path) -> None:
    outcome = in_a_fresh_process(tmp_path, "tests.engine.test_embedded_retry", "retry")
    assert outcome["finished"], outcome
    assert [retries for retries, _ in outcome["seen"]] == [0, 1, 2]
    assert all(url.startswith("memory://") for _, url in outcome["seen"]), outcome


def retry() -> None:
    """In a fresh process: one task retried twice through the embedded worker."""
    from orchestrator.db.migrate import upgrade
    from orchestrator.engine.celery_app import create_app
    from orchestrator.engine.routing import NOTIFICATIONS_QUEUE, ORCHESTRATOR_QUEUE, QUEUES
    from orchestrator.runtime.embedded import embedded_worker

    upgrade()
    app = create_app()
    job_queue = next(q for q in QUEUES if q not in (ORCHESTRATOR_QUEUE, NOTIFICATIONS_QUEUE))
    with embedded_worker(app, concurrency=2):
        app.send_task("tests.retried_twice", queue=job_queue)
        finished = _done.wait(scaled(30))
    print(json.dumps({"finished": finished, "seen": _seen}))
