"""Outbound webhooks per tenant: signed, retried with backoff, deduplicated by event id."""

from orchestrator.notifications.events import NotificationEvent, event_id
from orchestrator.notifications.settings import NOTIFICATIONS_QUEUE

__all__ = ["NOTIFICATIONS_QUEUE", "NotificationEvent", "event_id"]
