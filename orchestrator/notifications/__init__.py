"""Outbound webhooks per tenant: signed, retried with backoff, deduplicated by event id."""

from orchestrator.engine.routing import NOTIFICATIONS_QUEUE
from orchestrator.notifications.events import NotificationEvent, event_id

__all__ = ["NOTIFICATIONS_QUEUE", "NotificationEvent", "event_id"]
