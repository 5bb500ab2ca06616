"""Loading a run for a decision and writing the decided state back, version-checked.

Core statements built once: this is the hot path of every signal, and a run is read and
written as one row, with no ORM identity or unit of work around it.
"""

from __future__ import annotations

import uuid
from typing import Any, Protocol, TypeAlias

from sqlalchemy import Row, bindparam, exists, select, update
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import ConcurrentUpdate
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.db.tables import RUNS, SUBSCRIPTIONS
from orchestrator.lifecycle.state import RunState

RunRecord: TypeAlias = Row[*tuple[Any, ...]]
"""A run read with Core: its columns as attributes (a `RunRow` and more)."""


class RunIdentity(Protocol):
    """Whose a run is: what every row written for it carries."""

    @property
    def id(self) -> Any: ...
    @property
    def tenant_id(self) -> str: ...
    @property
    def organization_id(self) -> str: ...
    @property
    def assessment_id(self) -> Any: ...


class RunRow(RunIdentity, Protocol):
    """What a decision needs of a run row (an ORM object, a Core row or a read model):
    read-only, so any of them fits."""

    @property
    def id(self) -> uuid.UUID: ...
    @property
    def status(self) -> str: ...
    @property
    def current_step(self) -> str | None: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def context(self) -> dict[str, Any]: ...
    @property
    def version(self) -> int: ...


_LOCKED_COLUMNS = select(
    RUNS.c.id,
    RUNS.c.assessment_id,
    RUNS.c.tenant_id,
    RUNS.c.organization_id,
    RUNS.c.status,
    RUNS.c.current_step,
    RUNS.c.reason,
    RUNS.c.context,
    RUNS.c.version,
    # Read with the lock: a tenant without an active webhook subscription (most) needs no
    # run events collected and no subscription query per transaction.
    exists()
    .where(SUBSCRIPTIONS.c.tenant_id == RUNS.c.tenant_id, SUBSCRIPTIONS.c.active.is_(True))
    .label("subscribed"),
).where(RUNS.c.id == bindparam("run_id"))
# FOR NO KEY UPDATE: it serialises the run's writers, yet lets other transactions insert
# rows that reference the run (their foreign-key check takes KEY SHARE). A job holding its
# own row and posting its outcome must never wait for a coordinator that waits for that row.
_LOCK = _LOCKED_COLUMNS.with_for_update(key_share=True)
_TRY_LOCK = _LOCKED_COLUMNS.with_for_update(key_share=True, skip_locked=True)
_SAVE = (
    update(RUNS)
    .where(RUNS.c.id == bindparam("run_id"), RUNS.c.version == bindparam("seen_version"))
    .values(
        status=bindparam("new_status"),
        current_step=bindparam("new_step"),
        reason=bindparam("new_reason"),
        context=bindparam("new_context", type_=RUNS.c.context.type),
        version=bindparam("new_version"),
        updated_at=bindparam("now", type_=RUNS.c.updated_at.type),
        completed_at=bindparam("completed", type_=RUNS.c.completed_at.type),
        active_assessment_id=bindparam("active", type_=RUNS.c.active_assessment_id.type),
    )
)


def lock_run(session: Session, run_id: uuid.UUID) -> RunRecord | None:
    """The run row under a write lock (FOR NO KEY UPDATE on PostgreSQL; SQLite locks the
    file)."""
    return session.execute(_LOCK, {"run_id": run_id}).first()


def try_lock_run(session: Session, run_id: uuid.UUID) -> RunRecord | None:
    """The run row if nobody holds its lock now, else None at once (SKIP LOCKED)."""
    return session.execute(_TRY_LOCK, {"run_id": run_id}).first()


def state_of(run: RunRow) -> RunState:
    return RunState.from_row(
        run_id=run.id,
        tenant_id=run.tenant_id,
        organization_id=run.organization_id,
        assessment_id=run.assessment_id,
        status=run.status,
        step=run.current_step,
        reason=run.reason,
        context=run.context or {},
    )


def save_state(session: Session, run: RunRow, state: RunState) -> None:
    """UPDATE ... WHERE version = :seen; zero rows means someone else changed the run.

    A run that was already completed or cancelled is frozen: decisions on it only record
    signals as ignored, so its row (completion time, version) is never written again."""
    if WorkflowStatus(run.status).is_terminal:
        return
    now = utcnow()
    terminal = state.status.is_terminal
    result = session.execute(
        _SAVE,
        {
            "run_id": run.id,
            "seen_version": run.version,
            "new_status": state.status.value,
            "new_step": state.step.value if state.step else None,
            "new_reason": state.reason,
            "new_context": state.context(),
            "new_version": run.version + 1,
            "now": now,
            "completed": now if terminal else None,
            "active": None if terminal else run.assessment_id,
        },
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        raise ConcurrentUpdate(f"run {run.id} changed during the decision", run_id=str(run.id))
