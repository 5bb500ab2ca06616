"""Publish outbox rows whose send failed (orchestrator/engine/outbox.py clears their mark).

Rows sent and waiting in a queue are marked, so a backlog is never published twice;
a queued job is lost only at its queued deadline, which is the lost-job sweep's to judge.

Rows are claimed with FOR UPDATE SKIP LOCKED and marked in the same transaction that
sends them, so two sweeps publish disjoint rows. A crash after sending and before commit
sends them again later: jobs are idempotent by job id.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy import select

from orchestrator.config.settings import get_settings
from orchestrator.config.sweep_registry import sweep
from orchestrator.contracts.clock import utcnow
from orchestrator.db.models import OutboxMessage
from orchestrator.db.session import transaction

log = logging.getLogger(__name__)


@sweep("outbox")
def publish_stale_outbox(grace: timedelta | None = None) -> int:
    from orchestrator.engine.messages import send_job

    settings = get_settings().sweeps
    now = utcnow()
    cutoff = now - (settings.grace if grace is None else grace)
    published = 0
    with transaction() as session:
        rows = session.scalars(
            select(OutboxMessage)
            .where(OutboxMessage.published_at.is_(None), OutboxMessage.created_at < cutoff)
            .order_by(OutboxMessage.id)
            .limit(settings.batch)
            .with_for_update(skip_locked=True)
        )
        for message in rows:
            try:
                send_job(message.task_name, message.queue, message.task_id, message.body)
            except Exception:  # the broker is down: leave the row for the next sweep
                log.exception("publishing outbox message %s failed", message.id)
                continue
            message.published_at = now
            published += 1
    return published
