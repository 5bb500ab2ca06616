"""Publishing outbox rows to Celery right after the coordinator's transaction committed.

A job's row is written already marked published, in the coordinator's transaction (no
second transaction per publish): its message is sent right after the commit. A send that
fails clears the mark, and the outbox sweep publishes the row again after GRACE_S. A
message that was sent and now waits in its queue is left alone, however long the backlog;
if it is lost in the broker (or the process died between commit and send), the job is
still queued at its queued deadline and the lost-job sweep sends it again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import update

from orchestrator.db.models import OutboxMessage
from orchestrator.db.session import transaction

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutboxEntry:
    """One job message, as written to the outbox row in the coordinator's transaction."""

    task_name: str
    queue: str
    task_id: str
    body: dict[str, Any]
    priority: int | None = None
    """Its tenant's order on the queue (tenant_order.py); None: the broker's default."""


@dataclass(frozen=True)
class PublishedBatch:
    published: int
    failed: int


def publish_messages(messages: Sequence[OutboxEntry]) -> PublishedBatch:
    """Send each message; a failed send is left for the sweep, it stops nothing else."""
    from orchestrator.engine.messages import send_job

    failed = []
    for message in messages:
        try:
            send_job(
                message.task_name, message.queue, message.task_id, message.body, message.priority
            )
        except Exception:
            log.exception("publishing the message of job %s failed", message.task_id)
            failed.append(message.task_id)
    if failed:
        _unmark(failed)
    return PublishedBatch(len(messages) - len(failed), len(failed))


def _unmark(task_ids: list[str]) -> None:
    """Leave failed sends to the outbox sweep; if even this fails, the lost-job sweep."""
    try:
        with transaction() as session:
            session.execute(
                update(OutboxMessage)
                .where(OutboxMessage.task_id.in_(task_ids))
                .values(published_at=None)
            )
    except Exception:
        log.exception("could not mark %d unsent job message(s) for the outbox sweep", len(task_ids))
