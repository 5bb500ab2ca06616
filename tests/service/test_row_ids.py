"""Row ids sort by creation: a later run's rows key after an earlier run's in every index
(UUIDv7), so the runs in flight stay on the right edge however many runs wait."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from orchestrator.db.models import ApprovalEvent, Artifact, InboxSignal, WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.service.producer import get_run
from tests.support.sweeps import Clock, drive_to, new_tenant, start_run


def _ids_of(run_id: uuid.UUID) -> list[uuid.UUID]:
    """The uuid keys the run's rows were given: run, assessment, signals, drafts, approvals."""
    with transaction() as session:
        run = session.get(WorkflowRun, run_id)
        assert run is not None
        return [
            run.id,
            run.assessment_id,
            *session.scalars(select(InboxSignal.signal_id).where(InboxSignal.run_id == run_id)),
            *session.scalars(select(Artifact.id).where(Artifact.run_id == run_id)),
            *session.scalars(select(ApprovalEvent.id).where(ApprovalEvent.run_id == run_id)),
        ]


def test_every_key_of_a_later_run_sorts_after_every_key_of_an_earlier_one(quick: Clock) -> None:
    owner, reviewer = new_tenant()
    first = start_run(owner)
    drive_to(reviewer, first, "wait_for_gap_approval")
    second = start_run(owner)
    drive_to(reviewer, second, "wait_for_gap_approval")

    earlier, later = _ids_of(first), _ids_of(second)
    assert len(earlier) == len(later) > 10  # signals, the scope, SoA and gap drafts, approvals
    assert {key.version for key in earlier + later} == {7}
    assert max(earlier) < min(later)
    assert get_run(owner, second).status == "waiting_for_approval"
