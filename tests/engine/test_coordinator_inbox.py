"""The coordinator's transaction and the inbox on SQLite, driven without a worker."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy import func, select

from orchestrator.contracts.errors import (
    ActiveRunExists,
    IdempotencyConflict,
    InvalidInput,
    NotFound,
)
from orchestrator.contracts.identity import Actor
from orchestrator.db.models import AuditEvent, InboxSignal, Job, OutboxMessage, SignalConflict
from orchestrator.db.session import transaction
from orchestrator.engine.coordinator import coordinate
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import create_assessment, get_run, send_signal, start_lifecycle
from orchestrator.service.read_models import SignalReceipt

OWNER = Actor("tenant-a", "user:owner")
STRANGER = Actor("tenant-b", "user:stranger")


def no_kick(_: uuid.UUID) -> None:
    """The test applies signals itself, synchronously."""


def started_run(documents: bool = True) -> uuid.UUID:
    assessment = create_assessment(OWNER, "org", "Coordinator test")
    if documents:
        upload_document(
            OWNER, assessment.id, "policy.md", b"# Policy\n\nAccess is reviewed.", kick=no_kick
        )
    run = start_lifecycle(OWNER, assessment.id, f"start-{assessment.id}", kick=no_kick)
    return run.id


def fates(run_id: uuid.UUID) -> dict[str, str]:
    with transaction() as session:
        rows = session.execute(
            select(InboxSignal.idempotency_key, InboxSignal.fate).where(
                InboxSignal.run_id == run_id
            )
        ).all()
    return dict(rows)


def test_start_applies_pending_signals_in_one_wake_up(embedded: Path) -> None:
    run_id = started_run()
    result = coordinate(run_id)
    assert result.decided == 2 and result.still_pending == 0
    run = get_run(OWNER, run_id)
    assert (run.status, run.current_step) == ("running", "ingest_documents")
    assert run.version == 2  # one decision write for both signals
    with transaction() as session:
        job = session.scalar(select(Job).where(Job.run_id == run_id))
        outbox = session.scalar(select(OutboxMessage).where(OutboxMessage.run_id == run_id))
    assert job is not None and job.id == f"{run_id}:ingest_documents:1" and job.queue == "ingestion"
    # Sent after commit; marked published in the same transaction (a failed send clears it).
    assert outbox is not None and outbox.published_at is not None


def test_early_signal_stays_pending_until_its_step(embedded: Path) -> None:
    run_id = started_run(documents=False)
    coordinate(run_id)
    send_signal(
        OWNER, run_id, "framework_selected", "fw", payload={"framework": "SCF"}, kick=no_kick
    )
    coordinate(run_id)
    assert fates(run_id)["fw"] == "pending"
    assert get_run(OWNER, run_id).current_step == "wait_for_documents"


def test_duplicate_signal_returns_the_first_and_records_nothing(embedded: Path) -> None:
    run_id = started_run()
    coordinate(run_id)

    def block() -> SignalReceipt:
        """The same request each time: its idempotency key and payload."""
        return send_signal(
            OWNER,
            run_id,
            "assessment_blocked",
            "block-1",
            payload={"reason": "waiting for the CISO"},
            kick=no_kick,
        )

    first = block()
    coordinate(run_id)
    with transaction() as session:
        audits = session.scalar(select(func.count()).select_from(AuditEvent))
    again = block()
    coordinate(run_id)
    assert again.duplicate and again.signal_id == first.signal_id and again.fate == "applied"
    with transaction() as session:
        assert session.scalar(select(func.count()).select_from(AuditEvent)) == audits
    assert get_run(OWNER, run_id).status == "blocked"


def test_same_key_with_other_payload_is_a_recorded_conflict(embedded: Path) -> None:
    run_id = started_run()
    send_signal(OWNER, run_id, "assessment_blocked", "k", payload={"reason": "a"}, kick=no_kick)
    with pytest.raises(IdempotencyConflict):
        send_signal(OWNER, run_id, "assessment_blocked", "k", payload={"reason": "b"}, kick=no_kick)
    with transaction() as session:
        conflicts = list(session.scalars(select(SignalConflict)))
    assert len(conflicts) == 1 and conflicts[0].envelope["payload"] == {"reason": "b"}
    coordinate(run_id)
    assert get_run(OWNER, run_id).reason == "a"


def test_bad_input_is_refused_and_nothing_is_stored(embedded: Path) -> None:
    run_id = started_run()
    with transaction() as session:
        before = session.scalar(select(func.count()).select_from(InboxSignal))
    with pytest.raises(InvalidInput, match="unknown signal type"):
        send_signal(OWNER, run_id, "approve_everything", "x", kick=no_kick)
    with pytest.raises(InvalidInput, match="sent by the fleet"):
        send_signal(OWNER, run_id, "job_completed", "x", kick=no_kick)
    with pytest.raises(InvalidInput, match="invalid signal"):
        send_signal(OWNER, run_id, "soa_approved", "x", kick=no_kick)  # no approval event
    with pytest.raises(NotFound):
        send_signal(OWNER, uuid.uuid4(), "assessment_resumed", "x", kick=no_kick)
    with pytest.raises(NotFound):
        send_signal(STRANGER, run_id, "assessment_cancelled", "x", kick=no_kick)
    with pytest.raises(InvalidInput):
        send_signal(
            OWNER, run_id, "assessment_blocked", "x", payload={"blob": "z" * 70_000}, kick=no_kick
        )
    with transaction() as session:
        assert session.scalar(select(func.count()).select_from(InboxSignal)) == before


def test_one_active_run_per_assessment_and_idempotent_start(embedded: Path) -> None:
    assessment = create_assessment(OWNER, "org", "Start twice")
    first = start_lifecycle(OWNER, assessment.id, "k1", kick=no_kick)
    assert start_lifecycle(OWNER, assessment.id, "k1", kick=no_kick).id == first.id
    with pytest.raises(ActiveRunExists):
        start_lifecycle(OWNER, assessment.id, "k2", kick=no_kick)
    other = create_assessment(OWNER, "org", "Other")
    with pytest.raises(IdempotencyConflict):
        start_lifecycle(OWNER, other.id, "k1", kick=no_kick)
    with pytest.raises(NotFound):
        start_lifecycle(STRANGER, assessment.id, "k3", kick=no_kick)


def test_cancel_is_terminal_and_frees_the_assessment(embedded: Path) -> None:
    run_id = started_run()
    coordinate(run_id)
    send_signal(
        OWNER, run_id, "assessment_cancelled", "stop", payload={"reason": "dup"}, kick=no_kick
    )
    send_signal(OWNER, run_id, "assessment_resumed", "resume", kick=no_kick)
    coordinate(run_id)
    run = get_run(OWNER, run_id)
    assert run.status == "cancelled" and run.completed_at is not None
    assert fates(run_id)["resume"] == "ignored"
    with transaction() as session:
        job = session.scalar(select(Job).where(Job.run_id == run_id))
    assert job is not None and job.status == "cancelled"
    # The assessment may start a new run now.
    assert start_lifecycle(OWNER, run.assessment_id, "again", kick=no_kick).id != run_id
