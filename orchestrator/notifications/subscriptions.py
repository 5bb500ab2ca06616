"""Per-tenant webhook subscriptions: where to POST which events, and the signing secret."""

from __future__ import annotations

import uuid
from datetime import datetime
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from orchestrator.config.settings import get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.events import NotificationEvent
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.ids import new_id
from orchestrator.db.ops_models import WebhookSubscription
from orchestrator.notifications.outbound_addresses import AddressRefused, check_host
from orchestrator.notifications.signed_targets import (
    add_once,
    deactivate_row,
    secret_or_new,
    tenant_rows,
)


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
    check_url(url)
    types = _check_event_types(event_types or [])
    row = WebhookSubscription(
        id=new_id(),
        tenant_id=actor.tenant_id,
        url=url,
        secret=secret_or_new(secret, "webhook"),
        event_types=types,
        active=True,
        created_by=actor.actor_id,
        created_at=utcnow(),
    )
    add_once(row, f"{url} is already subscribed for this tenant")
    return _view(row).model_copy(update={"secret": row.secret})


def list_subscriptions(actor: Actor) -> list[SubscriptionView]:
    return [_view(row) for row in tenant_rows(WebhookSubscription, actor)]


def deactivate(actor: Actor, subscription_id: uuid.UUID) -> SubscriptionView:
    """Stop new deliveries to a subscription (its delivery history stays)."""
    return _view(
        deactivate_row(WebhookSubscription, actor, subscription_id, "webhook subscription")
    )


def _view(row: WebhookSubscription) -> SubscriptionView:
    return SubscriptionView(
        id=row.id,
        tenant_id=row.tenant_id,
        url=row.url,
        event_types=list(row.event_types),
        active=row.active,
        created_at=row.created_at,
    )


def check_url(url: str) -> None:
    """Webhooks and export targets alike: http(s), no credentials, a host that is not
    internal (a name is checked again each time it is resolved, at delivery)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or len(url) > 2000:
        raise InvalidInput("a webhook URL must be http(s)://host/... (at most 2000 characters)")
    if parts.username or parts.password:
        raise InvalidInput(
            "a webhook URL must not carry credentials; the signature authenticates each delivery"
        )
    try:
        check_host(parts.hostname, get_settings().outbound.allowed_networks)
    except AddressRefused:
        raise InvalidInput(
            "a webhook URL must name a public address: loopback, link-local, private, "
            "multicast, reserved and unspecified addresses are refused unless the operator "
            "allows their network (LIFECYCLE_OUTBOUND_ALLOWED_NETWORKS)"
        ) from None


def _check_event_types(event_types: list[str]) -> list[str]:
    known = {event.value for event in NotificationEvent}
    unknown = sorted(set(event_types) - known)
    if unknown:
        raise InvalidInput(
            f"unknown event types: {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return sorted(set(event_types))
