"""Notification tasks on their own queue: thin wrappers over plain functions."""

from __future__ import annotations

from celery import shared_task

from orchestrator.notifications.delivery import deliver
from orchestrator.notifications.sweep import sweep_deliveries


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
    name="notifications.sweep",
    ignore_result=True,
    soft_time_limit=60,
    time_limit=90,
    send_events=False,
)  # a sweep: no task events (see beat_schedule)
def sweep_notifications() -> int:
    return sweep_deliveries().dispatched
