"""Recording a notification and one delivery per matching subscription, in the caller's
transaction: an event and the promise to tell the tenant about it commit together."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.events import NotificationEvent
from orchestrator.db.ops_models import Notification, WebhookSubscription
from orchestrator.db.sql import insert_for
from orchestrator.engine.run_events import dispatch_deliveries, insert_deliveries


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
    inserted = session.execute(
        insert_for(session, Notification)
        .values(
            id=event_id,
            tenant_id=tenant_id,
            run_id=run_id,
            event_type=event.value,
            payload=payload,
            created_at=now,
        )
        .on_conflict_do_nothing(index_elements=["id"])
        .returning(Notification.id)
    ).scalar()
    if inserted is None:
        return []
    targets = [
        sub.id
        for sub in session.scalars(
            select(WebhookSubscription).where(
                WebhookSubscription.tenant_id == tenant_id, WebhookSubscription.active.is_(True)
            )
        )
        if not sub.event_types or event.value in sub.event_types
    ]
    if not targets:
        return []
    return insert_deliveries(session, event_id, targets, now)


# After commit: ask a notifications worker to deliver each (one place: the engine's).
dispatch = dispatch_deliveries
