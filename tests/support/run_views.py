"""A run's view made up in the test, for code that only reads one (the demo's progress)."""

from __future__ import annotations

import uuid

from orchestrator.contracts.clock import utcnow
from orchestrator.service.read_models import RunView


def run_view(
    status: str,
    step: str | None,
    *,
    run_id: uuid.UUID | None = None,
    completed: bool = False,
) -> RunView:
    """A run of a made-up assessment, in `status` at `step`; `completed` sets when it
    completed (now)."""
    now = utcnow()
    return RunView(
        id=uuid.uuid4() if run_id is None else run_id,
        assessment_id=uuid.uuid4(),
        tenant_id="t",
        organization_id="o",
        status=status,
        current_step=step,
        reason=None,
        version=1,
        trace_id="x",
        context={},
        created_at=now,
        updated_at=now,
        completed_at=now if completed else None,
    )
