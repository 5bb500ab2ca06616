"""The events a tenant can subscribe to, and their deterministic ids."""

from __future__ import annotations

import uuid
from enum import StrEnum

_NAMESPACE = uuid.UUID("6f1c2a53-6f4e-4a53-9a0e-5b0b8f2f4c11")


class NotificationEvent(StrEnum):
    APPROVAL_REMINDER = "approval.reminder"
    APPROVAL_ESCALATED = "approval.escalated"
    APPROVAL_BLOCKED = "approval.blocked"
    SLA_BREACHED = "run.sla_breached"
    RUN_STALE = "run.stale"
    JOB_DEAD_LETTERED = "job.dead_lettered"
    # Told when the run changes (orchestrator.engine.run_events, same names).
    APPROVAL_REQUESTED = "approval.requested"
    RUN_STEP_STARTED = "run.step_started"
    RUN_STEP_COMPLETED = "run.step_completed"
    RUN_WAITING = "run.waiting"
    RUN_COMPLETED = "run.completed"
    RUN_FAILED = "run.failed"
    RUN_CANCELLED = "run.cancelled"


def event_id(*parts: object) -> uuid.UUID:
    """The same occasion always yields the same id: receivers and we dedupe on it."""
    return uuid.uuid5(_NAMESPACE, ":".join(str(part) for part in parts))
