"""The coordinator task and the sweeps' tasks: thin wrappers over plain functions (each
sweep's task is made from its declaration in orchestrator.config.sweep_registry)."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from celery import shared_task
from celery.signals import task_postrun, task_prerun, worker_process_init
from sqlalchemy.exc import OperationalError

from orchestrator.config.sweep_registry import Sweep, declared
from orchestrator.contracts.errors import ConcurrentUpdate
from orchestrator.contracts.plain import jsonable
from orchestrator.db.session import dispose_engines
from orchestrator.engine.coordinator import coordinate as coordinate_run
from orchestrator.engine.routing import COORDINATE_TASK
from orchestrator.engine.schedule import sweep_tasks
from orchestrator.notifications import tasks as _notification_tasks  # noqa: F401 (registers)
from orchestrator.runtime import blas as _blas  # noqa: F401 (connects worker_init)
from orchestrator.runtime import broker_declare as _declare  # noqa: F401 (connects worker_init)
from orchestrator.runtime import preload as _preload  # noqa: F401 (connects worker_init)
from orchestrator.runtime import registrations as _registrations  # noqa: F401 (handlers)
from orchestrator.sweeps.pulse import sweep_finished, sweep_started

log = logging.getLogger(__name__)


@shared_task(
    name=COORDINATE_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(ConcurrentUpdate, OperationalError),
    retry_backoff=True,
    retry_backoff_max=30,
    retry_jitter=True,  # Celery's full jitter: coordinators of one outage spread out
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


def _sweep_task(sweep: Sweep) -> Any:
    def run() -> Any:
        # A plain value: the worker's log line and any result backend read it as JSON.
        return jsonable(sweep.function()())

    run.__name__ = run.__qualname__ = f"sweep_{sweep.name}"
    run.__doc__ = sweep.does
    return shared_task(name=sweep.task, **_SWEEP_OPTIONS)(run)


#: The task beat sends for each sweep, by the sweep's name (orchestrator.config.sweep_registry).
SWEEP_TASK_BY_NAME: dict[str, Any] = {}


def register_sweep_tasks() -> dict[str, Any]:
    """A task for every declared sweep that has none yet (at import, and again in a test
    that declares one more)."""
    for sweep in declared():
        if sweep.name not in SWEEP_TASK_BY_NAME:
            SWEEP_TASK_BY_NAME[sweep.name] = _sweep_task(sweep)
    return SWEEP_TASK_BY_NAME


register_sweep_tasks()


@worker_process_init.connect
def _fresh_pools_after_fork(**_: object) -> None:
    # Connections inherited from the parent process must never be shared with it.
    dispose_engines()


@task_prerun.connect
def _sweep_started(task: Any = None, **_: Any) -> None:
    if getattr(task, "name", None) in sweep_tasks():
        _beat_pulse(sweep_started, task.name)


@task_postrun.connect
def _sweep_finished(task: Any = None, state: str | None = None, **_: Any) -> None:
    if getattr(task, "name", None) in sweep_tasks():
        _beat_pulse(sweep_finished, task.name, None if state == "SUCCESS" else state)


def _beat_pulse(record: Any, *args: Any) -> None:
    """The pulse is for the health report: a failure to record it never fails a sweep."""
    try:
        record(*args)
    except Exception:
        log.warning("could not record the pulse of %s", args[0], exc_info=True)
