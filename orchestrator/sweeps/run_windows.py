"""Reading the runs whose timestamp crossed a threshold since the previous sweep."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import InstrumentedAttribute, Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.statuses import TERMINAL_STATUSES
from orchestrator.db.models import WorkflowRun
from orchestrator.sweeps.cursors import move_cursor, open_window, read_window

_TERMINAL = [status.value for status in TERMINAL_STATUSES]


def for_active_runs_crossing(
    session: Session,
    cursor: str,
    at: InstrumentedAttribute[Any],
    end: datetime,
    now: datetime,
    handle: Callable[[WorkflowRun], int],
) -> int:
    """Call `handle` for each active run whose `at` lies in this sweep's window."""
    window = open_window(session, cursor, end)
    query = select(WorkflowRun).where(WorkflowRun.status.not_in(_TERMINAL))
    rows, position = read_window(
        session, query, window, at, WorkflowRun.id, uuid.UUID, get_settings().sweeps.batch
    )
    fired = sum(handle(row[0]) for row in rows)
    move_cursor(session, window, position, now)
    return fired
