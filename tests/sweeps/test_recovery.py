"""Outbox and inbox recovery with a moved clock."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from sqlalchemy import update

from orchestrator.db.models import OutboxMessage
from orchestrator.db.session import transaction
from orchestrator.engine.coordinator import coordinate
from orchestrator.service.producer import get_run, send_signal
from orchestrator.sweeps import publish_stale_outbox, rekick_pending_runs
from tests.support.sweeps import Clock, count, drive_to, new_tenant, no_kick, start_run

QueueLength = Callable[[str], int]


def test_outbox_rows_left_unpublished_are_published_once(
    clock: Clock, queued_messages: QueueLength
) -> None:
    owner, _ = new_tenant()
    run_id = start_run(owner)
    coordinate(run_id)  # queues the ingestion job and publishes it
    with transaction() as session:  # a crash between commit and publish
        session.execute(update(OutboxMessage).values(published_at=None))
    before = queued_messages("ingestion")

    clock.advance(seconds=5)
    assert publish_stale_outbox() == 0, "younger rows are their writer's to publish"
    clock.advance(seconds=6)
    assert publish_stale_outbox() == 1
    assert publish_stale_outbox() == 0
    assert queued_messages("ingestion") == before + 1
    assert count(OutboxMessage, OutboxMessage.published_at.is_(None)) == 0


def test_runs_with_pending_signals_are_woken_with_backoff(
    clock: Clock, queued_messages: QueueLength
) -> None:
    owner, reviewer = new_tenant()
    run_id = start_run(owner)  # the start signal is pending; its kick was never sent
    kicks = queued_messages("orchestrator")

    assert rekick_pending_runs() == 0, "within the grace period"
    clock.advance(seconds=11)
    assert rekick_pending_runs() == 1
    assert queued_messages("orchestrator") == kicks + 1
    assert rekick_pending_runs() == 0, "backing off"
    clock.advance(seconds=21)  # a jittered wait of at most 20 s
    assert rekick_pending_runs() == 1, "the kick was lost again: within 20 s, once more"

    coordinate(run_id)  # the coordinator finally runs
    clock.advance(minutes=30)
    assert rekick_pending_runs() == 0, "nothing pending, nothing to wake"


def test_a_new_signal_is_woken_without_waiting_for_the_backoff(clock: Clock) -> None:
    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    drive_to(reviewer, run_id, "wait_for_framework_selection")
    # An approval long before its wait stays pending: the run is woken again, backing off.
    early = send_signal(
        owner,
        run_id,
        "gap_analysis_approved",
        "early-gap",
        approval_event_id=uuid.uuid4(),
        kick=no_kick,
    )
    assert early.fate.value == "pending"
    clock.advance(seconds=11)
    assert rekick_pending_runs() == 1
    clock.advance(seconds=30)
    assert rekick_pending_runs() == 1  # backoff (at most 20 s) passed: still pending, woken again
    clock.advance(seconds=1)
    send_signal(
        owner, run_id, "framework_selected", "fw", payload={"framework": "SCF"}, kick=no_kick
    )
    clock.advance(seconds=11)
    assert rekick_pending_runs() == 1, "a newer signal resets the backoff"
    coordinate(run_id)
    assert get_run(owner, run_id).current_step != "wait_for_framework_selection"
