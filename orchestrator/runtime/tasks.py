"""The coordinator task and the recovery sweeps: thin wrappers over plain functions."""

from __future__ import annotations

import uuid

from celery import shared_task
from celery.signals import worker_process_init
from sqlalchemy.exc import OperationalError

from orchestrator import sweeps
from orchestrator.contracts.errors import ConcurrentUpdate
from orchestrator.db.session import dispose_engines
from orchestrator.engine.coordinator import coordinate as coordinate_run
from orchestrator.engine.routing import COORDINATE_TASK
from orchestrator.notifications import tasks as _notification_tasks  # noqa: F401 (registers)


@shared_task(
    name=COORDINATE_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(ConcurrentUpdate, OperationalError),
    retry_backoff=True,
    retry_backoff_max=30,
    max_retries=8,
    soft_time_limit=60,
    time_limit=90,
)
def coordinate(self: object, run_id: str) -> dict[str, object]:
    result = coordinate_run(uuid.UUID(run_id))
    return {"run_id": run_id, "decided": result.decided, "status": result.status}


#: Sweeps send no task events: thousands a day would push jobs out of Flower's history.
_SWEEP_OPTIONS = {
    "ignore_result": True,
    "soft_time_limit": 60,
    "time_limit": 90,
    "send_events": False,
}


@shared_task(name="orchestrator.sweep_missing_messages", **_SWEEP_OPTIONS)
def sweep_missing_messages() -> dict[str, int]:
    found = sweeps.resend_missing_messages()
    return {"checked": found.checked, "resent": found.resent}


@shared_task(name="orchestrator.sweep_outbox", **_SWEEP_OPTIONS)
def sweep_outbox() -> int:
    return sweeps.publish_stale_outbox()


@shared_task(name="orchestrator.sweep_inbox", **_SWEEP_OPTIONS)
def sweep_inbox() -> int:
    return sweeps.rekick_pending_runs()


@shared_task(name="orchestrator.sweep_lost_jobs", **_SWEEP_OPTIONS)
def sweep_lost_jobs() -> dict[str, int]:
    found = sweeps.recover_lost_jobs()
    return {"redispatched": found.redispatched, "dead_lettered": found.dead_lettered}


@shared_task(name="orchestrator.sweep_approval_waits", **_SWEEP_OPTIONS)
def sweep_approval_waits() -> dict[str, int]:
    return sweeps.sweep_approval_waits()


@shared_task(name="orchestrator.sweep_sla", **_SWEEP_OPTIONS)
def sweep_sla() -> int:
    return sweeps.sweep_sla()


@shared_task(name="orchestrator.sweep_stale", **_SWEEP_OPTIONS)
def sweep_stale() -> int:
    return sweeps.sweep_stale()


@worker_process_init.connect
def _fresh_pools_after_fork(**_: object) -> None:
    # Connections inherited from the parent process must never be shared with it.
    dispose_engines()
