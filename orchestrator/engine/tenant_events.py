"""Recording a notification and one delivery per matching subscription, in the caller's
transaction: an event and the promise to tell the tenant about it commit together.

Here, below the service and the notifications package, so that both call it and
neither imports the other for it."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from orchestrator.contracts.events import NotificationEvent
from orchestrator.engine.run_events import (
    active_subscriptions,
    dispatch_deliveries,
    insert_deliveries,
    insert_notification,
    subscribed_to,
)


def notify(
    session: Session,
    *,
    event_id: uuid.UUID,
    tenant_id: str,
    run_id: uuid.UUID | None,
    event: NotificationEvent,
    payload: dict[str, Any],
    now: datetime,
) -> list[int]:
    """The ids of the deliveries created; none when this event id was recorded before."""
    if not insert_notification(session, event_id, tenant_id, run_id, event, payload, now):
        return []
    targets = subscribed_to(active_subscriptions(session, tenant_id), event)
    if not targets:
        return []
    return insert_deliveries(session, event_id, targets, now)


# After commit: ask a notifications worker to deliver each (one place: the engine's).
dispatch = dispatch_deliveries
