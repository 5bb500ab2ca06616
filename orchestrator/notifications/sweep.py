"""The notifications sweep: re-open interrupted deliveries, send the due ones to workers."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select, update

from orchestrator.config.settings import get_settings
from orchestrator.config.webhooks import WebhookSettings
from orchestrator.contracts.clock import utcnow
from orchestrator.db.ops_models import DeliveryAttempt, NotificationDelivery
from orchestrator.db.session import transaction
from orchestrator.db.sql import insert_for
from orchestrator.notifications.delivery import DeliveryStatus
from orchestrator.notifications.enqueue import dispatch


@dataclass(frozen=True)
class NotificationSweep:
    reopened: int
    dispatched: int


def sweep_deliveries(settings: WebhookSettings | None = None) -> NotificationSweep:
    settings = settings or get_settings().webhooks
    batch = get_settings().sweeps.batch
    reopened = _reopen_interrupted(batch, settings)
    cutoff = utcnow() - get_settings().sweeps.grace
    with transaction() as session:
        due = list(
            session.scalars(
                select(NotificationDelivery.id)
                .where(
                    NotificationDelivery.status == DeliveryStatus.PENDING.value,
                    NotificationDelivery.next_attempt_at <= cutoff,
                )
                .order_by(NotificationDelivery.next_attempt_at)
                .limit(batch)
            )
        )
    dispatch(due)
    return NotificationSweep(reopened, len(due))


def _reopen_interrupted(batch: int, settings: WebhookSettings) -> int:
    """A 'delivering' delivery past its lease lost its worker: record that, try again."""
    now = utcnow()
    with transaction() as session:
        stuck = session.execute(
            select(NotificationDelivery.id, NotificationDelivery.attempts)
            .where(
                NotificationDelivery.status == DeliveryStatus.DELIVERING.value,
                NotificationDelivery.next_attempt_at < now,
            )
            .order_by(NotificationDelivery.id)
            .limit(batch)
        ).all()
        reopened = 0
        for delivery_id, attempts in stuck:
            gives_up = attempts >= settings.max_attempts
            status = DeliveryStatus.FAILED if gives_up else DeliveryStatus.PENDING
            moved = session.execute(
                update(NotificationDelivery)
                .where(
                    NotificationDelivery.id == delivery_id,
                    NotificationDelivery.status == DeliveryStatus.DELIVERING.value,
                    NotificationDelivery.attempts == attempts,
                )
                .values(
                    status=status.value,
                    next_attempt_at=now,
                    last_error="delivery interrupted (worker lost)",
                )
                .execution_options(synchronize_session=False)
            )
            if not moved.rowcount:  # type: ignore[attr-defined]
                continue  # another sweep, or the worker itself, got there first
            reopened += 1
            session.execute(
                insert_for(session, DeliveryAttempt)
                .values(
                    delivery_id=delivery_id,
                    attempt=attempts,
                    status_code=None,
                    error="delivery interrupted (worker lost)",
                    succeeded=False,
                    duration_ms=0,
                    started_at=now,
                )
                .on_conflict_do_nothing(index_elements=["delivery_id", "attempt"])
            )
    return reopened
