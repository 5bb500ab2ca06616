"""Queued jobs whose messages the broker no longer has are sent again, once, within the
message check; a backlog waiting in its queue is never sent twice.

The in-memory broker of the embedded default stands in for Redis here (both are read the
same way, oldest first); nothing consumes its queues, so what waits there can be counted.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from orchestrator.config.settings import get_settings
from orchestrator.contracts.audit import AuditEventType
from orchestrator.engine import coordinator
from orchestrator.engine.coordinator import coordinate
from orchestrator.engine.messages import get_app
from orchestrator.engine.outbox import OutboxEntry, PublishedBatch
from orchestrator.observability.broker_view import BrokerView, WorkerHoldings
from orchestrator.sweeps import recover_lost_jobs
from orchestrator.sweeps.missing_messages import MESSAGE_MISSING, resend_missing_messages
from tests.support.sweeps import Clock, audits_of, new_tenant, start_run

QueueLength = Callable[[str], int]
BACKLOG = 5


class _Workers(BrokerView):
    """The broker as it is; the workers' answer given by the test (no worker runs here)."""

    def __init__(self, held: frozenset[str] = frozenset()):
        super().__init__(get_app())
        self.held = held
        self.asked = 0

    def holdings(self, timeout_s: float = 1.0, *, running: bool = True) -> WorkerHoldings:
        self.asked += 1
        return WorkerHoldings(self.held, 1 if self.held else 0)


@pytest.fixture
def purge() -> Iterator[Callable[[str], None]]:
    def purge_queue(queue: str) -> None:
        with get_app().connection_for_write() as connection:
            connection.default_channel.queue_purge(queue)

    yield purge_queue


def _resends(run_id: uuid.UUID) -> int:
    return sum(
        1
        for event in audits_of(run_id, AuditEventType.LIFECYCLE_WORKFLOW_JOB_REDISPATCHED.value)
        if event.event_metadata.get("reason") == MESSAGE_MISSING
    )


def _queued_runs(count: int) -> list[uuid.UUID]:
    owner, _ = new_tenant()
    runs = [start_run(owner) for _ in range(count)]
    for run_id in runs:
        coordinate(run_id)  # its ingestion job is queued and its message sent
    return runs


def test_a_backlog_waits_without_being_sent_twice(
    clock: Clock, queued_messages: QueueLength
) -> None:
    before = queued_messages("ingestion")
    runs = _queued_runs(BACKLOG)
    clock.advance(seconds=get_settings().sweeps.grace_s + 1)
    view = _Workers()
    for _ in range(3):
        found = resend_missing_messages(view)
        assert found.resent == 0
        assert found.checked >= BACKLOG
        clock.advance(seconds=get_settings().sweeps.interval("messages"))
    assert view.asked == 0, "nothing was missing: the workers need not be asked"
    assert queued_messages("ingestion") == before + BACKLOG
    assert sum(_resends(run_id) for run_id in runs) == 0


def test_messages_the_broker_lost_are_sent_again_once(
    clock: Clock, queued_messages: QueueLength, purge: Callable[[str], None]
) -> None:
    runs = _queued_runs(BACKLOG)
    purge("ingestion")  # FLUSHALL, or a Redis restarted without persistence
    assert queued_messages("ingestion") == 0

    assert resend_missing_messages(_Workers()).resent == 0, "younger than the grace period"
    clock.advance(seconds=get_settings().sweeps.grace_s + 1)
    assert resend_missing_messages(_Workers()).resent == BACKLOG
    assert queued_messages("ingestion") == BACKLOG
    clock.advance(seconds=get_settings().sweeps.grace_s + 1)
    assert resend_missing_messages(_Workers()).resent == 0, "they wait in the queue again"
    assert queued_messages("ingestion") == BACKLOG
    assert [_resends(run_id) for run_id in runs] == [1] * BACKLOG
    # A broker fault is not the job's: the re-dispatch limit is untouched.
    clock.advance(seconds=get_settings().sweeps.queued_deadline_s + 1)
    assert recover_lost_jobs().dead_lettered == 0


def test_a_message_a_live_worker_holds_is_not_sent_again(
    clock: Clock, queued_messages: QueueLength, purge: Callable[[str], None]
) -> None:
    runs = _queued_runs(2)
    purge("ingestion")  # both taken off the queue: one by a live worker, one lost
    held = frozenset({f"{runs[0]}:ingest_documents:1"})
    clock.advance(seconds=get_settings().sweeps.grace_s + 1)
    assert resend_missing_messages(_Workers(held=held)).resent == 1
    assert [_resends(run_id) for run_id in runs] == [0, 1]
    assert queued_messages("ingestion") == 1


def test_a_process_killed_between_commit_and_send_loses_nothing(
    clock: Clock, queued_messages: QueueLength, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = queued_messages("ingestion")

    def died_before_sending(messages: list[OutboxEntry]) -> PublishedBatch:
        return PublishedBatch(0, 0)  # committed, marked published, never sent

    owner, _ = new_tenant()
    run_id = start_run(owner)
    with monkeypatch.context() as dying:
        dying.setattr(coordinator, "publish_messages", died_before_sending)
        coordinate(run_id)
    assert queued_messages("ingestion") == before
    clock.advance(seconds=get_settings().sweeps.grace_s + 1)
    assert resend_missing_messages(_Workers()).resent == 1
    assert queued_messages("ingestion") == before + 1
    assert _resends(run_id) == 1


def test_at_the_queued_deadline_a_backlog_that_workers_consume_is_left_waiting(
    clock: Clock, queued_messages: QueueLength, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.sweeps import lost_jobs

    before = queued_messages("ingestion")
    _queued_runs(BACKLOG)
    monkeypatch.setattr(lost_jobs, "consumers_now", lambda: {"ingestion": ["w1@host"]})
    clock.advance(seconds=get_settings().sweeps.queued_deadline_s + 1)
    assert recover_lost_jobs().redispatched == 0
    assert queued_messages("ingestion") == before + BACKLOG
    # Nobody consumes the queue: re-dispatched, toward a dead letter that says so.
    monkeypatch.setattr(lost_jobs, "consumers_now", lambda: {})
    assert recover_lost_jobs().redispatched == BACKLOG
