"""Resolving dead letters: a later success of their step settles them.

A dead letter says "this step's job was lost and someone must act". Once the step has
succeeded (a retry, a replay, a reprocess), nothing is left to act on. The job that
succeeds resolves them in its own transaction, so the letter and the success agree.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import cast

from sqlalchemy import Table, bindparam, update
from sqlalchemy.orm import Session

from orchestrator.contracts.audit import SYSTEM_ACTOR
from orchestrator.db.ops_models import DeadLetter

DEAD_LETTERS = cast(Table, DeadLetter.__table__)

_RESOLVE_STEP = (
    update(DEAD_LETTERS)
    .where(
        DEAD_LETTERS.c.run_id == bindparam("of_run"),
        DEAD_LETTERS.c.step == bindparam("of_step"),
        DEAD_LETTERS.c.resolved_at.is_(None),
    )
    .values(
        resolved_at=bindparam("now", type_=DEAD_LETTERS.c.resolved_at.type),
        resolved_by=SYSTEM_ACTOR,
        resolution=bindparam("settled_by"),
    )
)


def resolve_by_success(
    session: Session, run_id: uuid.UUID, step: str, job_id: str, attempt: int, now: datetime
) -> int:
    """Resolve the run's open dead letters of `step`, now that job `job_id` succeeded.
    A dead letter failed an earlier attempt, so a first attempt has none to resolve."""
    if attempt <= 1:
        return 0
    result = session.execute(
        _RESOLVE_STEP,
        {
            "of_run": run_id,
            "of_step": step,
            "now": now,
            "settled_by": f"step succeeded: job {job_id}",
        },
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
