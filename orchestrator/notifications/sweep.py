"""The notifications sweep: re-open interrupted deliveries, send the due ones to workers."""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.config.settings import get_settings
from orchestrator.config.sweep_registry import sweep
from orchestrator.config.webhooks import WebhookSettings
from orchestrator.contracts.clock import utcnow
from orchestrator.db.ops_models import NotificationDelivery
from orchestrator.db.session import transaction
from orchestrator.engine.tenant_events import dispatch
from orchestrator.notifications.delivery import DELIVERIES, DeliveryStatus, record_attempt
from orchestrator.notifications.leases import exhausted
from orchestrator.notifications.transport import Response

LOST = "delivery interrupted (worker lost)"


@dataclass(frozen=True)
class NotificationSweep:
    reopened: int
    dispatched: int


@sweep("notifications")
def sweep_deliveries(settings: WebhookSettings | None = None) -> NotificationSweep:
    reopened = _reopen_interrupted(settings or get_settings().webhooks)
    return NotificationSweep(reopened, DELIVERIES.dispatch_due(utcnow(), dispatch))


def _reopen_interrupted(settings: WebhookSettings) -> int:
    """A 'delivering' delivery past its lease lost its worker: record that, try again."""
    now = utcnow()
    columns = (NotificationDelivery.id, NotificationDelivery.attempts)
    with transaction() as session:
        reopened = 0
        for delivery_id, attempts in session.execute(DELIVERIES.lapsed(now, *columns)).all():
            status = (
                DeliveryStatus.FAILED if exhausted(attempts, settings) else DeliveryStatus.PENDING
            )
            if not DELIVERIES.release(
                session,
                delivery_id,
                attempts,
                status=status.value,
                next_attempt_at=now,
                last_error=LOST,
            ):
                continue  # another sweep, or the worker itself, got there first
            reopened += 1
            record_attempt(session, delivery_id, attempts, Response(None, LOST), 0, now)
    return reopened
