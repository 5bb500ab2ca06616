"""`celery -A bench.compare.sqlcount_app worker ...`: the fleet's own app, with SQL counting on.

The worker runs exactly the orchestrator's tasks and settings. This module only installs
the statement/transaction counters (bench.compare.sqlcount), counts the SQL of every coordinator
call apart (`coordinate.*`, whether the coordinator task or a job applying its own
outcome made the call), counts finished tasks by name and logs when each job message was
handed to the broker.

A job that applies its outcome inside its own transaction (`apply_if_free`) shares that
transaction with the coordinator's side: it is counted there once, as one writing
transaction, with the statements run inside the call.
"""

from __future__ import annotations

import sys
import uuid
from typing import Any

from celery.signals import after_task_publish, import_modules, task_postrun

import orchestrator.engine.coordinator as coordinator_module
from bench.compare import sqlcount
from orchestrator.engine.messages import get_app
from orchestrator.engine.routing import COORDINATE_TASK

sqlcount.install_if_enabled()
_publishes = sqlcount.PublishLog()
_coordinate = coordinator_module.coordinate
_apply_if_free = coordinator_module.apply_if_free


def _counted_coordinate(run_id: uuid.UUID) -> Any:
    with sqlcount.scope("coordinate"):
        sqlcount.count("calls")
        return _coordinate(run_id)


def _counted_apply_if_free(session: Any, run_id: uuid.UUID) -> Any:
    with sqlcount.scope("coordinate"):
        applied = _apply_if_free(session, run_id)
        if applied is not None:
            sqlcount.count("calls")
            sqlcount.count("write_commits")  # the job's own, shared
        return applied


_COUNTED = {id(_coordinate): _counted_coordinate, id(_apply_if_free): _counted_apply_if_free}


def _rebind(**_: Any) -> None:
    """Point every imported reference to the coordinator's functions at the counted ones
    (modules that did `from orchestrator.engine.coordinator import coordinate`)."""
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(("orchestrator", "workers")):
            continue
        for attribute, value in list(vars(module).items()):
            counted = _COUNTED.get(id(value))
            if counted is not None:
                setattr(module, attribute, counted)


_rebind()
import_modules.connect(_rebind)  # after the worker imported the task modules


@after_task_publish.connect
def _log_publish(sender: Any = None, headers: dict[str, Any] | None = None, **_: Any) -> None:
    # Job messages only: the time the next job was dispatched, for completion -> dispatch.
    if sender != COORDINATE_TASK and headers and headers.get("id"):
        _publishes.record(str(headers["id"]))


@task_postrun.connect
def _count_task(sender: Any = None, **_: Any) -> None:
    sqlcount.count(f"task:{getattr(sender, 'name', 'unknown')}")


app = get_app()
