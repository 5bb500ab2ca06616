"""Run transitions as webhook events: `run.step_started`, `run.step_completed`,
`run.waiting` (with `approval.requested` beside it when the wait is for an approval),
`run.completed`, `run.failed`, `run.cancelled`.

They come from the audit effects the coordinator writes, in the same transaction: an
event and the promise to deliver it commit with the transition. Each event's id derives
from the signal that caused it, so applying a signal again after a crash yields the same
ids and nothing twice. A tenant with no subscription costs one small read per batch and
no rows.

The rows are the notifications package's (a notification, one delivery per matching
subscription), written here because the engine sits below that package; its workers and
sweep deliver them like every other event.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.audit import AuditEventType as _E
from orchestrator.contracts.events import RUN_EVENT_NAMESPACE, NotificationEvent
from orchestrator.contracts.events import event_id as _event_id
from orchestrator.db.ops_models import Notification, NotificationDelivery, WebhookSubscription
from orchestrator.db.sql import insert_for


def event_id(*parts: object) -> uuid.UUID:
    return _event_id(*parts, namespace=RUN_EVENT_NAMESPACE)


_EVENTS: dict[_E, NotificationEvent] = {
    _E.LIFECYCLE_WORKFLOW_STEP_STARTED: NotificationEvent.RUN_STEP_STARTED,
    _E.LIFECYCLE_WORKFLOW_STEP_COMPLETED: NotificationEvent.RUN_STEP_COMPLETED,
    _E.LIFECYCLE_WORKFLOW_WAITING_FOR_INPUT: NotificationEvent.RUN_WAITING,
    _E.LIFECYCLE_WORKFLOW_WAITING_FOR_APPROVAL: NotificationEvent.RUN_WAITING,
    _E.LIFECYCLE_WORKFLOW_COMPLETED: NotificationEvent.RUN_COMPLETED,
    _E.LIFECYCLE_WORKFLOW_FAILED: NotificationEvent.RUN_FAILED,
    _E.LIFECYCLE_WORKFLOW_CANCELLED: NotificationEvent.RUN_CANCELLED,
}

_WAITS = {
    _E.LIFECYCLE_WORKFLOW_WAITING_FOR_INPUT: "waiting_for_input",
    _E.LIFECYCLE_WORKFLOW_WAITING_FOR_APPROVAL: "waiting_for_approval",
}


@dataclass(frozen=True)
class RunEvent:
    id: uuid.UUID
    event: NotificationEvent
    data: dict[str, Any]


@dataclass
class RunEvents:
    """The run events of one coordinator transaction, written when its rows are."""

    run_id: uuid.UUID
    tenant_id: str
    organization_id: str
    assessment_id: uuid.UUID
    subscribed: bool | None = None
    """Whether the tenant has an active subscription (read with the run's lock); None:
    unknown, asked when the events are written. False: nothing is collected."""
    pending: list[RunEvent] = field(default_factory=list)

    def collect(
        self, event_type: _E, step: str | None, metadata: dict[str, Any], cause: object
    ) -> None:
        event = _EVENTS.get(event_type)
        if event is None or self.subscribed is False:
            return
        data: dict[str, Any] = {
            "run_id": str(self.run_id),
            "assessment_id": str(self.assessment_id),
            "organization_id": self.organization_id,
            "step": step,
            **{k: v for k, v in metadata.items() if v is not None},
        }
        if event_type in _WAITS:
            data["status"] = _WAITS[event_type]
        console = get_settings().webhooks.console_url.rstrip("/")
        data["console_url"] = f"{console}/runs/{self.run_id}"
        self.pending.append(RunEvent(event_id(self.run_id, cause, event.value, step), event, data))
        if event_type is _E.LIFECYCLE_WORKFLOW_WAITING_FOR_APPROVAL:
            gate, version = metadata.get("artifact_kind"), metadata.get("artifact_version")
            requested = {
                **data,
                "gate": gate,
                "version": version,
                "console_url": f"{console}/runs/{self.run_id}/artifacts/{gate}?version={version}",
            }
            self.pending.append(
                RunEvent(
                    event_id(self.run_id, cause, NotificationEvent.APPROVAL_REQUESTED.value, step),
                    NotificationEvent.APPROVAL_REQUESTED,
                    requested,
                )
            )

    def write(self, session: Session, now: datetime) -> list[int]:
        """Record the collected events for the tenant's subscriptions; the deliveries'
        ids, to be dispatched after commit."""
        events, self.pending = self.pending, []
        if not events:
            return []
        subscriptions = active_subscriptions(session, self.tenant_id)
        deliveries: list[int] = []
        for item in events:
            targets = subscribed_to(subscriptions, item.event)
            if targets and insert_notification(
                session, item.id, self.tenant_id, self.run_id, item.event, item.data, now
            ):
                deliveries += insert_deliveries(session, item.id, targets, now)
        return deliveries


def insert_notification(
    session: Session,
    notification_id: uuid.UUID,
    tenant_id: str,
    run_id: uuid.UUID | None,
    event: NotificationEvent,
    payload: dict[str, Any],
    now: datetime,
) -> bool:
    """The event once (its id decides); False when it was recorded before."""
    inserted = session.execute(
        insert_for(session, Notification)
        .values(
            id=notification_id,
            tenant_id=tenant_id,
            run_id=run_id,
            event_type=event.value,
            payload=payload,
            created_at=now,
        )
        .on_conflict_do_nothing(index_elements=["id"])
        .returning(Notification.id)
    ).scalar()
    return inserted is not None


def insert_deliveries(
    session: Session, notification_id: uuid.UUID, targets: Sequence[uuid.UUID], now: datetime
) -> list[int]:
    """One pending delivery of a notification per subscription, each written once; the
    ids of those written now."""
    rows = [
        {
            "notification_id": notification_id,
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


def dispatch_deliveries(delivery_ids: Sequence[int]) -> None:
    """After commit: ask a notifications worker to deliver each (a lost message is found
    again by the notifications sweep; a duplicate finds the delivery claimed)."""
    from orchestrator.engine.messages import get_app
    from orchestrator.engine.routing import NOTIFICATIONS_QUEUE

    app = get_app()
    for delivery_id in delivery_ids:
        app.send_task("notifications.deliver", args=[delivery_id], queue=NOTIFICATIONS_QUEUE)


def subscribed_to(
    subscriptions: Sequence[tuple[uuid.UUID, list[str]]], event: NotificationEvent
) -> list[uuid.UUID]:
    """The subscriptions taking this event (those naming no types take every event)."""
    return [sub_id for sub_id, types in subscriptions if not types or event.value in types]


def active_subscriptions(session: Session, tenant_id: str) -> list[tuple[uuid.UUID, list[str]]]:
    return [
        (sub_id, list(types or []))
        for sub_id, types in session.execute(
            select(WebhookSubscription.id, WebhookSubscription.event_types).where(
                WebhookSubscription.tenant_id == tenant_id, WebhookSubscription.active.is_(True)
            )
        )
    ]
