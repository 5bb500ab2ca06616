"""Per-tenant webhook subscriptions: where to POST which events, and the signing secret."""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import InvalidInput, NotFound
from orchestrator.contracts.identity import Actor
from orchestrator.db.ops_models import WebhookSubscription
from orchestrator.db.session import transaction
from orchestrator.notifications.events import NotificationEvent

MIN_SECRET_LENGTH = 24


class SubscriptionView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: uuid.UUID
    tenant_id: str
    url: str
    event_types: list[str]
    active: bool
    created_at: datetime
    secret: str | None = None
    """Shown once, when the subscription is created."""


def subscribe(
    actor: Actor, url: str, event_types: list[str] | None = None, secret: str | None = None
) -> SubscriptionView:
    """Subscribe the actor's tenant; the same URL twice is refused, not duplicated."""
    _check_url(url)
    types = _check_event_types(event_types or [])
    if secret is not None and len(secret) < MIN_SECRET_LENGTH:
        raise InvalidInput(f"a webhook secret needs at least {MIN_SECRET_LENGTH} characters")
    row = WebhookSubscription(
        id=uuid.uuid4(),
        tenant_id=actor.tenant_id,
        url=url,
        secret=secret or secrets.token_urlsafe(32),
        event_types=types,
        active=True,
        created_by=actor.actor_id,
        created_at=utcnow(),
    )
    try:
        with transaction() as session:
            session.add(row)
    except IntegrityError as error:
        raise InvalidInput(f"{url} is already subscribed for this tenant") from error
    return _view(row).model_copy(update={"secret": row.secret})


def list_subscriptions(actor: Actor) -> list[SubscriptionView]:
    with transaction() as session:
        rows = session.scalars(
            select(WebhookSubscription)
            .where(WebhookSubscription.tenant_id == actor.tenant_id)
            .order_by(WebhookSubscription.created_at)
        )
        return [_view(row) for row in rows]


def deactivate(actor: Actor, subscription_id: uuid.UUID) -> SubscriptionView:
    """Stop new deliveries to a subscription (its delivery history stays)."""
    with transaction() as session:
        row = session.get(WebhookSubscription, subscription_id)
        if row is None or row.tenant_id != actor.tenant_id:
            raise NotFound(f"webhook subscription {subscription_id} not found")
        row.active = False
        return _view(row)


def _view(row: WebhookSubscription) -> SubscriptionView:
    return SubscriptionView(
        id=row.id,
        tenant_id=row.tenant_id,
        url=row.url,
        event_types=list(row.event_types),
        active=row.active,
        created_at=row.created_at,
    )


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or len(url) > 2000:
        raise InvalidInput("a webhook URL must be http(s)://host/... (at most 2000 characters)")
    if parts.username or parts.password:
        raise InvalidInput(
            "a webhook URL must not carry credentials; the signature authenticates each delivery"
        )


def _check_event_types(event_types: list[str]) -> list[str]:
    known = {event.value for event in NotificationEvent}
    unknown = sorted(set(event_types) - known)
    if unknown:
        raise InvalidInput(
            f"unknown event types: {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return sorted(set(event_types))
