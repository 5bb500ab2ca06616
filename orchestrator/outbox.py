"""Publishing outbox rows to Celery after their transaction committed."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select, update

from orchestrator.clock import utcnow
from orchestrator.db.models import OutboxMessage
from orchestrator.db.session import transaction

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PublishedBatch:
    published: int
    failed: int


def publish(outbox_ids: Sequence[int]) -> PublishedBatch:
    """Publish the named rows that are still unpublished (the sweep's entry point)."""
    with transaction() as session:
        messages = list(session.scalars(select(OutboxMessage).where(
            OutboxMessage.id.in_(outbox_ids), OutboxMessage.published_at.is_(None))))
    return publish_messages(messages)


def publish_messages(messages: Sequence[OutboxMessage]) -> PublishedBatch:
    """Send each message, then mark the sent ones. A crash in between re-sends them later;
    jobs are idempotent by job id, so a second copy finds the work done."""
    from orchestrator.fleet import send_job

    sent: list[int] = []
    for message in messages:
        try:
            send_job(message.task_name, message.queue, message.task_id, message.body)
        except Exception:  # the sweep publishes what is left; one bad send stops nothing
            log.exception("publishing outbox message %s failed", message.id)
            continue
        sent.append(message.id)
    if sent:
        with transaction() as session:
            session.execute(update(OutboxMessage).where(OutboxMessage.id.in_(sent))
                            .values(published_at=utcnow()))
    return PublishedBatch(len(sent), len(messages) - len(sent))


def unpublished_ids(limit: int = 500) -> list[int]:
    with transaction() as session:
        return list(session.scalars(select(OutboxMessage.id).where(
            OutboxMessage.published_at.is_(None)).order_by(OutboxMessage.id).limit(limit)))
