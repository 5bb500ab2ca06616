"""Recording a notification and one delivery per matching subscription, in the caller's
transaction: an event and the promise to tell the tenant about it commit together."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.db.ops_models import Notification, NotificationDelivery, WebhookSubscription
from orchestrator.db.sql import insert_for
from orchestrator.notifications.events import NotificationEvent


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
    rows = [
        {
            "notification_id": event_id,
            "subscription_id": target,
            "status": "pending",
            "attempts": 0,
            "next_attempt_at": now,
            "created_at": now,
        }
        for target in targets
    ]
    return list(
        session.scalars(
            insert_for(session, NotificationDelivery)
            .values(rows)
            .on_conflict_do_nothing(index_elements=["notification_id", "subscription_id"])
            .returning(NotificationDelivery.id)
        )
    )


def dispatch(delivery_ids: Sequence[int]) -> None:
    """After commit: ask a notifications worker to deliver each. A lost message is found
    again by the notifications sweep; a duplicate finds the delivery claimed."""
    from orchestrator.engine.messages import get_app
    from orchestrator.engine.routing import NOTIFICATIONS_QUEUE

    app = get_app()
    for delivery_id in delivery_ids:
        app.send_task("notifications.deliver", args=[delivery_id], queue=NOTIFICATIONS_QUEUE)
