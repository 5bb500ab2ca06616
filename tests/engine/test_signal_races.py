"""50 threads race approvals, duplicates and a cancel against one run on PostgreSQL."""

from __future__ import annotations

import random
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select

from orchestrator.contracts.errors import LifecycleError
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import AuditEvent, InboxSignal, WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.engine.coordinator import coordinate
from orchestrator.engine.replay import replay_run
from orchestrator.engine.run_rows import state_of
from orchestrator.service.approval_events import record_approval
from orchestrator.service.operations import cancel_run
from orchestrator.service.producer import get_run, send_signal
from orchestrator.testing.worker_processes import WorkerProcesses
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import wait_for
from tests.support.roles import grant

INSTANT = ("orchestrator.testing.instant_worker",)
SIGNAL_AUDITS = (
    "lifecycle_workflow_signal_received",
    "lifecycle_workflow_signal_ignored",
    "lifecycle_workflow_signal_rejected",
)


def coordinate_now(run_id: uuid.UUID) -> None:
    """Each thread applies what it sent itself: every thread contends for the run's lock."""
    coordinate(run_id)


@pytest.mark.broker_matrix
def test_fifty_threads_end_in_one_consistent_outcome(fleet: WorkerProcesses) -> None:
    fleet.start("orchestrator", concurrency=2, include=INSTANT)
    fleet.start("ingestion,kb_index,analysis,reporting", concurrency=2, include=INSTANT)
    owner, _ = new_tenant()
    run = start_assessment(owner, documents=1)

    class StopAtSoa(ScriptedReviewer):
        def answer(self, view):  # type: ignore[no-untyped-def]
            return False if view.current_step == "wait_for_soa_approval" else super().answer(view)

    setup = grant(Actor(owner.tenant_id, "user:setup"))
    wait_for(lambda: _answer(StopAtSoa(setup), run.id, owner), what="the SoA approval wait")
    reviewers = [grant(Actor(owner.tenant_id, f"user:reviewer-{i}")) for i in range(10)]
    events = [record_approval(r, run.id, "soa", 1) for r in reviewers]
    stale = record_approval(reviewers[0], run.id, "scope", 1)  # wrong kind for soa_approved
    rng = random.Random(7)

    def act(i: int) -> str:
        try:
            if i == 25:
                cancel_run(
                    owner,
                    run.id,
                    reason="duplicate assessment",
                    idempotency_key="cancel",
                    kick=coordinate_now,
                )
                return "cancel"
            if i % 10 == 9:
                send_signal(
                    reviewers[0],
                    run.id,
                    "soa_approved",
                    "wrong-kind",
                    approval_event_id=stale.id,
                    kick=coordinate_now,
                )
                return "wrong-kind"
            n = rng.randrange(len(events)) if i % 3 else i % len(events)
            send_signal(
                reviewers[n],
                run.id,
                "soa_approved",
                f"approve-{n}",
                approval_event_id=events[n].id,
                kick=coordinate_now,
            )
            return "approve"
        except LifecycleError as error:
            return error.code

    with ThreadPoolExecutor(max_workers=50) as pool:
        outcomes = Counter(pool.map(act, range(50)))
    coordinate(run.id)  # drain anything a losing thread left pending

    final = get_run(owner, run.id)
    assert final.status == "cancelled"
    wrong_kind = next(row for row in _inbox(run.id) if row.idempotency_key == "wrong-kind")
    # Five sends, one stored signal: rejected (before the cancel) or ignored (after it).
    assert wrong_kind.fate in ("rejected", "ignored")
    assert outcomes["signal_rejected"] == (5 if wrong_kind.fate == "rejected" else 0)
    with transaction() as session:
        audits = list(session.scalars(select(AuditEvent).where(AuditEvent.run_id == run.id)))
        replayed = replay_run(session, run.id)
        stored = state_of(session.get(WorkflowRun, run.id))  # type: ignore[arg-type]
    inbox = _inbox(run.id)
    keys = Counter(row.idempotency_key for row in inbox)
    assert max(keys.values()) == 1, "a duplicate signal was stored twice"
    assert all(row.fate != "pending" for row in inbox)
    per_signal = Counter(
        a.event_metadata["signal_id"] for a in audits if a.event_type in SIGNAL_AUDITS
    )
    assert set(per_signal) == {str(row.signal_id) for row in inbox}
    assert set(per_signal.values()) == {1}, "an audit event was lost or doubled"
    accepted = [a for a in audits if a.event_type == "lifecycle_workflow_approval_accepted"]
    cancelled = [a for a in audits if a.event_type == "lifecycle_workflow_cancelled"]
    assert len(cancelled) == 1
    # Single-approver gate: at most one approval counted, and only if it beat the cancel.
    assert len(accepted) <= 1
    if accepted:
        assert accepted[0].id < cancelled[0].id
        assert stored.approved.get(ArtifactKind.SOA) == 1
    assert replayed == stored


def _inbox(run_id: uuid.UUID) -> list[InboxSignal]:
    with transaction() as session:
        return list(session.scalars(select(InboxSignal).where(InboxSignal.run_id == run_id)))


def _answer(reviewer: ScriptedReviewer, run_id: uuid.UUID, owner: Actor) -> bool:
    view = get_run(owner, run_id)
    reviewer.answer(view)
    return view.current_step == "wait_for_soa_approval" and view.status == "waiting_for_approval"
