"""The events a tenant can subscribe to (webhooks), and their deterministic ids.

The run events (a step started or completed, a wait, an approval requested, the run's end)
are told by the engine as it commits (orchestrator.engine.run_events); the others by the
sweeps and services. Names are a contract with subscribers: add, never rename.
"""

from __future__ import annotations

import uuid
from enum import StrEnum

_NAMESPACE = uuid.UUID("6f1c2a53-6f4e-4a53-9a0e-5b0b8f2f4c11")
#: The run events' ids were always made in a namespace of their own: kept, so an event told
#: before an upgrade keeps its id after it.
RUN_EVENT_NAMESPACE = uuid.UUID("0b6b1d5e-3f0a-4d1c-9a59-3c2f1e7d8a41")


class NotificationEvent(StrEnum):
    APPROVAL_REMINDER = "approval.reminder"
    APPROVAL_ESCALATED = "approval.escalated"
    APPROVAL_BLOCKED = "approval.blocked"
    SLA_BREACHED = "run.sla_breached"
    RUN_STALE = "run.stale"
    JOB_DEAD_LETTERED = "job.dead_lettered"
    # Told when the run changes (orchestrator.engine.run_events).
    APPROVAL_REQUESTED = "approval.requested"
    RUN_STEP_STARTED = "run.step_started"
    RUN_STEP_COMPLETED = "run.step_completed"
    RUN_WAITING = "run.waiting"
    RUN_COMPLETED = "run.completed"
    RUN_FAILED = "run.failed"
    RUN_CANCELLED = "run.cancelled"
    # Effects outside the database (docs/engine.md).
    APPROVAL_WITHDRAWN = "approval.withdrawn"
    """An approval request withdrawn: its version was rejected, superseded or cancelled."""
    HANDOFF_OPENED = "handoff.opened"
    """An effect outside the database needs a person; `data.owner` started the run."""
    # Evidence with a life (docs/continuous.md).
    EVIDENCE_EXPIRING = "evidence.expiring"
    """A document's expiry date is near; `data.owner` keeps it."""
    EVIDENCE_EXPIRED = "evidence.expired"
    """A document reached its expiry date: it is no longer evidence."""
    EVIDENCE_REQUEST_OVERDUE = "evidence_request.overdue"
    EVIDENCE_REQUEST_ESCALATED = "evidence_request.escalated"
    # Review claims (docs/console.md).
    REVIEW_CLAIM_TAKEN_OVER = "review.claim_taken_over"
    """Someone took over a review another person held; `data.holder` held it."""


#: The events the engine tells when a run changes.
RUN_EVENTS = frozenset(
    {
        NotificationEvent.APPROVAL_REQUESTED,
        NotificationEvent.RUN_STEP_STARTED,
        NotificationEvent.RUN_STEP_COMPLETED,
        NotificationEvent.RUN_WAITING,
        NotificationEvent.RUN_COMPLETED,
        NotificationEvent.RUN_FAILED,
        NotificationEvent.RUN_CANCELLED,
    }
)


def event_id(*parts: object, namespace: uuid.UUID = _NAMESPACE) -> uuid.UUID:
    """The same occasion always yields the same id: receivers and we dedupe on it."""
    return uuid.uuid5(namespace, ":".join(str(part) for part in parts))
