"""Delivering one notification to one subscription, at most one attempt at a time.

1. Claim it under a lease (notifications.leases: pending and due -> delivering).
2. POST the signed body outside any transaction.
3. Record the attempt and the delivery's new status, guarded by the attempt number, so a
   worker whose lease expired cannot overwrite a newer attempt's result.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.config.webhooks import WebhookSettings
from orchestrator.contracts.clock import utcnow
from orchestrator.db.ops_models import (
    DeliveryAttempt,
    Notification,
    NotificationDelivery,
    WebhookSubscription,
)
from orchestrator.db.session import transaction
from orchestrator.db.sql import insert_for
from orchestrator.notifications import signing
from orchestrator.notifications.leases import LeasedRows, exhausted
from orchestrator.notifications.transport import Post, Response, post


class DeliveryStatus(StrEnum):
    PENDING = "pending"
    DELIVERING = "delivering"
    DELIVERED = "delivered"
    FAILED = "failed"


DELIVERIES = LeasedRows(
    NotificationDelivery, DeliveryStatus.PENDING.value, DeliveryStatus.DELIVERING.value
)


@dataclass(frozen=True)
class Claim:
    delivery_id: int
    attempt: int
    url: str
    secret: str
    active: bool
    event_id: str
    event_type: str
    body: bytes


def deliver(
    delivery_id: int, transport: Post = post, settings: WebhookSettings | None = None
) -> DeliveryStatus | None:
    """One attempt; None when the delivery was not due (done, claimed, or backing off)."""
    settings = settings or get_settings().webhooks
    claim = _claim(delivery_id, utcnow(), settings)
    if claim is None:
        return None
    if not claim.active:
        return _record(claim, Response(None, "subscription deactivated"), 0, settings, give_up=True)
    started = time.monotonic()
    response = transport(claim.url, claim.body, _headers(claim), settings.timeout_s)
    elapsed_ms = int((time.monotonic() - started) * 1000)
    return _record(claim, response, elapsed_ms, settings)


def _claim(delivery_id: int, now: datetime, settings: WebhookSettings) -> Claim | None:
    with transaction() as session:
        attempt = DELIVERIES.claim(session, delivery_id, now, settings)
        if attempt is None:
            return None
        return _claim_of(session, delivery_id, attempt)


def _claim_of(session: Session, delivery_id: int, attempt: int) -> Claim:
    delivery = session.get(NotificationDelivery, delivery_id)
    assert delivery is not None
    notification = session.get(Notification, delivery.notification_id)
    subscription = session.get(WebhookSubscription, delivery.subscription_id)
    assert notification is not None and subscription is not None
    document = {
        "id": str(notification.id),
        "type": notification.event_type,
        "tenant_id": notification.tenant_id,
        "run_id": str(notification.run_id) if notification.run_id else None,
        "created_at": notification.created_at.isoformat(),
        "data": notification.payload,
    }
    body = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    return Claim(
        delivery_id,
        attempt,
        subscription.url,
        subscription.secret,
        subscription.active,
        str(notification.id),
        notification.event_type,
        body,
    )


def _headers(claim: Claim) -> dict[str, str]:
    timestamp = int(utcnow().timestamp())
    return {
        "Content-Type": "application/json",
        "User-Agent": "assessment-lifecycle-webhooks/1",
        **signing.signed_headers(
            claim.secret, claim.event_id, claim.event_type, claim.body, timestamp
        ),
    }


def _record(
    claim: Claim,
    response: Response,
    elapsed_ms: int,
    settings: WebhookSettings,
    give_up: bool = False,
) -> DeliveryStatus:
    now = utcnow()
    status = _next_status(response, claim.attempt, settings, give_up)
    with transaction() as session:
        record_attempt(session, claim.delivery_id, claim.attempt, response, elapsed_ms, now)
        DELIVERIES.release(
            session,
            claim.delivery_id,
            claim.attempt,
            status=status.value,
            last_error=response.error,
            delivered_at=now if response.ok else None,
            next_attempt_at=now + settings.backoff(claim.attempt),
        )
    return status


def _next_status(
    response: Response, attempt: int, settings: WebhookSettings, give_up: bool
) -> DeliveryStatus:
    if response.ok:
        return DeliveryStatus.DELIVERED
    if give_up or exhausted(attempt, settings):
        return DeliveryStatus.FAILED
    return DeliveryStatus.PENDING


def record_attempt(
    session: Session,
    delivery_id: int,
    attempt: int,
    response: Response,
    elapsed_ms: int,
    now: datetime,
) -> None:
    """The attempt's row, once: a worker and the sweep may both record one."""
    session.execute(
        insert_for(session, DeliveryAttempt)
        .values(
            delivery_id=delivery_id,
            attempt=attempt,
            status_code=response.status_code,
            error=response.error,
            succeeded=response.ok,
            duration_ms=elapsed_ms,
            started_at=now,
        )
        .on_conflict_do_nothing(index_elements=["delivery_id", "attempt"])
    )
