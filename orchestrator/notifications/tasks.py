"""Notification tasks on their own queue: thin wrappers over plain functions."""

from __future__ import annotations

import uuid

from celery import shared_task

from orchestrator.notifications.delivery import deliver
from orchestrator.notifications.effect_worker import perform_effect


@shared_task(
    name="notifications.deliver",
    acks_late=True,
    ignore_result=True,
    soft_time_limit=60,
    time_limit=90,
)
def deliver_notification(delivery_id: int) -> str | None:
    status = deliver(int(delivery_id))
    return status.value if status else None


@shared_task(
    name="effects.perform",
    acks_late=True,
    ignore_result=True,
    soft_time_limit=60,
    time_limit=90,
)
def perform_outside_effect(effect_id: str) -> str | None:
    status = perform_effect(uuid.UUID(effect_id))
    return status.value if status else None
