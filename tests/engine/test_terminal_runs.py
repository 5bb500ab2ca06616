"""A completed or cancelled run is frozen: later signals are recorded, its row never moves."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.engine.coordinator import coordinate
from orchestrator.service.producer import send_signal
from tests.engine.test_coordinator_inbox import OWNER, fates, no_kick, started_run


def _row(run_id: object) -> tuple[object, ...]:
    with transaction() as session:
        run = session.scalar(select(WorkflowRun).where(WorkflowRun.id == run_id))
        assert run is not None
        return (
            run.status,
            run.version,
            run.completed_at,
            run.updated_at,
            run.reason,
            run.current_step,
            run.context,
        )


def test_signals_to_a_cancelled_run_leave_its_row_unchanged(embedded: Path) -> None:
    run_id = started_run()
    coordinate(run_id)
    send_signal(
        OWNER, run_id, "assessment_cancelled", "stop", payload={"reason": "duplicate"}, kick=no_kick
    )
    coordinate(run_id)
    frozen = _row(run_id)
    assert frozen[0] == "cancelled" and frozen[2] is not None

    send_signal(
        OWNER, run_id, "assessment_resumed", "resume", payload={"reason": "oops"}, kick=no_kick
    )
    send_signal(
        OWNER,
        run_id,
        "assessment_cancelled",
        "stop-again",
        payload={"reason": "again"},
        kick=no_kick,
    )
    send_signal(OWNER, run_id, "documents_uploaded", "more-docs", kick=no_kick)
    coordinate(run_id)
    coordinate(run_id)

    seen = fates(run_id)
    assert [seen[key] for key in ("resume", "stop-again", "more-docs")] == ["ignored"] * 3
    assert _row(run_id) == frozen
