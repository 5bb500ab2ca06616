"""Loading a run for a decision and writing the decided state back, version-checked."""

from __future__ import annotations

import uuid

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from orchestrator.clock import utcnow
from orchestrator.db.models import WorkflowRun
from orchestrator.errors import ConcurrentUpdate
from orchestrator.lifecycle.state import RunState


def lock_run(session: Session, run_id: uuid.UUID) -> WorkflowRun | None:
    """The run row under a write lock (FOR UPDATE on PostgreSQL; SQLite locks the file)."""
    return session.scalar(select(WorkflowRun).where(WorkflowRun.id == run_id).with_for_update())


def state_of(run: WorkflowRun) -> RunState:
    return RunState.from_row(
        run_id=run.id, tenant_id=run.tenant_id, organization_id=run.organization_id,
        assessment_id=run.assessment_id, status=run.status, step=run.current_step,
        reason=run.reason, context=run.context or {})


def save_state(session: Session, run: WorkflowRun, state: RunState) -> None:
    """UPDATE ... WHERE version = :seen; zero rows means someone else changed the run."""
    now = utcnow()
    terminal = state.status.is_terminal
    result = session.execute(
        update(WorkflowRun)
        .where(WorkflowRun.id == run.id, WorkflowRun.version == run.version)
        .values(status=state.status.value,
                current_step=state.step.value if state.step else None,
                reason=state.reason, context=state.context(), version=run.version + 1,
                updated_at=now,
                completed_at=now if terminal else None,
                active_assessment_id=None if terminal else run.assessment_id)
        .execution_options(synchronize_session=False))
    if result.rowcount != 1:  # type: ignore[attr-defined]
        raise ConcurrentUpdate(f"run {run.id} changed during the decision", run_id=str(run.id))
