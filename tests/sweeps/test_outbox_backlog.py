"""A backlog is not a loss: the outbox sweep sends again only what was never sent."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from orchestrator.config.settings import get_settings
from orchestrator.db.models import OutboxMessage
from orchestrator.engine import messages
from orchestrator.engine.coordinator import coordinate
from orchestrator.sweeps import publish_stale_outbox, recover_lost_jobs
from tests.support.sweeps import Clock, count, new_tenant, start_run

QueueLength = Callable[[str], int]
BACKLOG = 6


def _broker_down(
    task_name: str, queue: str, task_id: str, body: object, priority: int | None = None
) -> None:
    raise ConnectionError("Error 111 connecting to the broker. Connection refused.")


def test_queued_messages_are_not_sent_again_but_failed_sends_are(
    clock: Clock, queued_messages: QueueLength, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner, _ = new_tenant()
    before = queued_messages("ingestion")
    for _ in range(BACKLOG):  # sent, and waiting: nothing consumes the ingestion queue
        coordinate(start_run(owner))
    unsent: uuid.UUID = start_run(owner)
    with monkeypatch.context() as broken:
        broken.setattr(messages, "send_job", _broker_down)
        assert coordinate(unsent).published is not None
    assert queued_messages("ingestion") == before + BACKLOG

    clock.advance(seconds=get_settings().sweeps.grace_s + 1)
    assert publish_stale_outbox() == 1, "only the message whose send failed"
    clock.advance(seconds=get_settings().sweeps.queued_deadline_s / 2)
    assert publish_stale_outbox() == 0, "a backlog is no reason to send again"
    assert recover_lost_jobs().redispatched == 0
    assert queued_messages("ingestion") == before + BACKLOG + 1  # each job once
    assert count(OutboxMessage, OutboxMessage.published_at.is_(None)) == 0

    # Still waiting at the queued deadline and no worker known to consume the queue (none
    # runs here): now the lost-job sweep sends them again (tests/sweeps/
    # test_missing_messages.py: a queue a live worker consumes is left waiting).
    clock.advance(seconds=get_settings().sweeps.queued_deadline_s)
    assert recover_lost_jobs().redispatched == BACKLOG + 1
