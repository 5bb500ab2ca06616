"""What a sweep does to a run: an audit event and a notification in its transaction, a
system signal through the inbox, and the messages to send once that transaction commits."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.events import NotificationEvent, event_id
from orchestrator.contracts.signals import SignalEnvelope, SignalType
from orchestrator.db.models import WorkflowRun
from orchestrator.engine.audit_rows import append_audit as audit_row
from orchestrator.engine.inbox import insert_signal
from orchestrator.engine.outbox import OutboxEntry
from orchestrator.engine.tenant_events import dispatch, notify

SWEEPER = "system:sweeper"


@dataclass
class SweepMessages:
    """Messages a sweep sends only after its transaction committed (never before)."""

    kicks: set[uuid.UUID] = field(default_factory=set)
    deliveries: list[int] = field(default_factory=list)
    jobs: list[OutboxEntry] = field(default_factory=list)

    def send(self) -> None:
        from orchestrator.engine.messages import kick, send_job

        for job in self.jobs:
            send_job(job.task_name, job.queue, job.task_id, job.body)
        for run_id in sorted(self.kicks):
            kick(run_id)
        dispatch(self.deliveries)


@dataclass(frozen=True)
class Occasion:
    """One effect on one run: `mark` and `key` name it, so its ids are deterministic."""

    run: WorkflowRun
    mark: str
    key: str
    now: datetime


def announce(
    session: Session,
    occasion: Occasion,
    audit: AuditEventType | None,
    notification: NotificationEvent,
    step: str | None,
    details: dict[str, Any],
    after: SweepMessages,
) -> None:
    """Append the audit event (if any) and record the tenant's notification, in `session`."""
    run = occasion.run
    if audit is not None:
        append_audit(session, run, audit, step, details, occasion.now)
    payload = {
        "run_id": str(run.id),
        "assessment_id": str(run.assessment_id),
        "organization_id": run.organization_id,
        "step": step,
        **details,
    }
    after.deliveries += notify(
        session,
        event_id=event_id(run.id, occasion.mark, occasion.key),
        tenant_id=run.tenant_id,
        run_id=run.id,
        event=notification,
        payload=payload,
        now=occasion.now,
    )


def append_audit(
    session: Session,
    run: WorkflowRun,
    event: AuditEventType,
    step: str | None,
    details: dict[str, Any],
    now: datetime,
) -> None:
    audit_row(session, run, event, step, details, now, SWEEPER)


def request_block(session: Session, occasion: Occasion, reason: str, after: SweepMessages) -> bool:
    """Block the run the way anyone would: an `assessment_blocked` signal in its inbox.
    The key is deterministic, so two sweeps insert it once. True when it is new."""
    run = occasion.run
    envelope = SignalEnvelope(
        type=SignalType.ASSESSMENT_BLOCKED,
        run_id=run.id,
        tenant_id=run.tenant_id,
        organization_id=run.organization_id,
        assessment_id=run.assessment_id,
        trace_id=run.trace_id,
        actor_id=SWEEPER,
        idempotency_key=f"sweeper:{occasion.mark}:{occasion.key}",
        payload={"reason": reason},
        received_at=occasion.now,
    )
    recorded = insert_signal(session, envelope)
    if recorded.duplicate or recorded.conflict:
        return False
    after.kicks.add(run.id)
    return True
