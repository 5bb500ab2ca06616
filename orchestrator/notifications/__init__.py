"""Outbound webhooks per tenant: signed, retried with backoff, deduplicated by event id."""

from orchestrator.contracts.events import NotificationEvent, event_id
from orchestrator.engine.routing import NOTIFICATIONS_QUEUE

__all__ = ["NOTIFICATIONS_QUEUE", "NotificationEvent", "event_id"]
