"""`celery -A bench.sqlcount_app worker ...`: the fleet's own app, with SQL counting on.

The worker runs exactly the orchestrator's tasks and settings; this module only installs
the statement/transaction counters (bench.sqlcount), counts finished tasks by name and
logs when each job message was handed to the broker.
"""

from __future__ import annotations

from typing import Any

from celery.signals import after_task_publish, task_postrun

from bench import sqlcount
from orchestrator.dispatch import COORDINATE_TASK
from orchestrator.fleet import get_app

sqlcount.install_if_enabled()
_publishes = sqlcount.PublishLog()


@after_task_publish.connect
def _log_publish(sender: Any = None, headers: dict[str, Any] | None = None, **_: Any) -> None:
    # Job messages only: the time the next job was dispatched, for completion -> dispatch.
    if sender != COORDINATE_TASK and headers and headers.get("id"):
        _publishes.record(str(headers["id"]))


@task_postrun.connect
def _count_task(sender: Any = None, **_: Any) -> None:
    sqlcount.count(f"task:{getattr(sender, 'name', 'unknown')}")


app = get_app()
