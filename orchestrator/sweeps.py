"""Recovery sweeps: publish what a crash left in the outbox, wake runs with pending signals."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from orchestrator.clock import utcnow
from orchestrator.contracts.signals import SignalFate
from orchestrator.db.models import InboxSignal, OutboxMessage
from orchestrator.db.session import transaction
from orchestrator.fleet import kick
from orchestrator.outbox import publish

#: Younger rows are still being handled by whoever wrote them.
GRACE = timedelta(seconds=10)
BATCH = 500


def publish_stale_outbox(grace: timedelta = GRACE) -> int:
    cutoff = utcnow() - grace
    with transaction() as session:
        ids = list(session.scalars(select(OutboxMessage.id).where(
            OutboxMessage.published_at.is_(None), OutboxMessage.created_at < cutoff)
            .order_by(OutboxMessage.id).limit(BATCH)))
    return publish(ids).published if ids else 0


def rekick_pending_runs(grace: timedelta = GRACE) -> int:
    cutoff = utcnow() - grace
    with transaction() as session:
        run_ids = list(session.scalars(select(InboxSignal.run_id).where(
            InboxSignal.fate == SignalFate.PENDING.value, InboxSignal.received_at < cutoff)
            .distinct().limit(BATCH)))
    for run_id in run_ids:
        kick(run_id)
    return len(run_ids)
