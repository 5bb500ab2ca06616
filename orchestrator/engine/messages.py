"""The process-wide Celery app and the two messages the fleet sends."""

from __future__ import annotations

import logging
import uuid
from functools import lru_cache
from typing import Any

from celery import Celery

from orchestrator.engine.routing import COORDINATE_TASK, ORCHESTRATOR_QUEUE
from orchestrator.engine.tenant_order import Level, priority
from orchestrator.observability import labels, tracing


@lru_cache(maxsize=1)
def get_app() -> Celery:
    from orchestrator.engine.celery_app import create_app

    return create_app()


def kick(run_id: uuid.UUID, behind: bool = False) -> None:
    """Wake the coordinator for a run: first, or `behind` other tenants' first wake-ups
    when its tenant has a backlog (tenant_order.py; the caller read it with the signal).
    Losing this message loses nothing: the inbox holds the signal and a sweep re-kicks
    runs with pending signals."""
    get_app().send_task(
        COORDINATE_TASK,
        args=[str(run_id)],
        queue=ORCHESTRATOR_QUEUE,
        argsrepr=labels.coordinate_argsrepr(run_id),
        priority=priority(Level.BACKLOG if behind else Level.FIRST),
    )


def send_job(
    task_name: str,
    queue: str,
    task_id: str,
    body: dict[str, Any],
    priority: int | None = None,
) -> None:
    # Every publish is stamped with its sent-at header (observability.celery_hooks), which
    # lets /metrics tell how long the oldest message of a queue waits; sent under the
    # traceparent of its outbox row, the message's headers continue the row's trace.
    with tracing.resumed(body.get("traceparent")):
        get_app().send_task(
            task_name,
            args=[body],
            queue=queue,
            task_id=task_id,
            shadow=f"{task_name}[{body.get('step')}]",
            argsrepr=labels.job_argsrepr(body),
            kwargsrepr=labels.job_kwargsrepr(body),
            priority=priority,
        )


def revoke(job_ids: list[str]) -> None:
    """Tell every worker to drop these jobs if they have not started (best effort: a job
    that runs anyway finds its row cancelled and commits nothing)."""
    try:
        get_app().control.revoke(job_ids)
    except Exception:  # the database already says cancelled; the broadcast is a courtesy
        logging.getLogger(__name__).warning("could not broadcast revoke of %s", job_ids)


def send_batch(task_name: str, queue: str, batch_id: str, body: dict[str, Any]) -> None:
    """One batch of a job that fans out (orchestrator.jobs.batches); its task id is the
    batch's id. A lost batch message loses nothing: the job takes the batch itself.
    Batches are their tenant's backlog: the job itself takes the first, and another
    tenant's first job goes ahead of the rest (tenant_order.py)."""
    get_app().send_task(
        task_name,
        args=[body],
        queue=queue,
        task_id=batch_id,
        priority=priority(Level.BACKLOG),
    )
