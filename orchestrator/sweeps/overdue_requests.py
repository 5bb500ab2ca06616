"""Overdue evidence requests, swept like approvals: remind once the due date has passed,
escalate `evidence_request_escalate_days` later, each once per request (guarded UPDATEs).

Each stage records a notification for the tenant's webhooks (`evidence_request.overdue`,
`evidence_request.escalated`, with the recipient and who asked) and, when the assessment
has a run, an audit event on its latest run.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.config.sweep_registry import sweep
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.events import NotificationEvent, event_id
from orchestrator.db.continuous_models import EvidenceRequest
from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.engine.audit_rows import append_audit
from orchestrator.engine.tenant_events import dispatch, notify
from orchestrator.service.evidence_requests import OPEN
from orchestrator.sweeps.sweep_actions import SWEEPER


@sweep("evidence_requests")
def sweep_overdue_requests(now: datetime | None = None) -> dict[str, int]:
    now = now or utcnow()
    today = now.date()
    escalate_after = timedelta(days=get_settings().sweeps.evidence_request_escalate_days)
    deliveries: list[int] = []
    counts = {"reminded": 0, "escalated": 0}
    with transaction() as session:
        due = session.scalars(
            select(EvidenceRequest)
            .where(EvidenceRequest.status == OPEN, EvidenceRequest.due_on < today)
            .order_by(EvidenceRequest.due_on, EvidenceRequest.id)
            .with_for_update(skip_locked=True)
        ).all()
        for request in due:
            if request.reminded_at is None and _mark(session, request, "reminded_at", now):
                counts["reminded"] += 1
                deliveries += _announce(session, request, now, escalated=False)
            if (
                request.escalated_at is None
                and request.due_on + escalate_after < today
                and _mark(session, request, "escalated_at", now)
            ):
                counts["escalated"] += 1
                deliveries += _announce(session, request, now, escalated=True)
    dispatch(deliveries)
    return counts


def _mark(session: Session, request: EvidenceRequest, column: str, now: datetime) -> bool:
    stamp = getattr(EvidenceRequest, column)
    moved = session.execute(
        update(EvidenceRequest)
        .where(EvidenceRequest.id == request.id, stamp.is_(None))
        .values({column: now})
        .returning(EvidenceRequest.id)
        .execution_options(synchronize_session="fetch")
    ).first()
    return moved is not None


def _announce(
    session: Session, request: EvidenceRequest, now: datetime, *, escalated: bool
) -> list[int]:
    audit, event = (
        (
            AuditEventType.LIFECYCLE_WORKFLOW_EVIDENCE_REQUEST_ESCALATED,
            NotificationEvent.EVIDENCE_REQUEST_ESCALATED,
        )
        if escalated
        else (
            AuditEventType.LIFECYCLE_WORKFLOW_EVIDENCE_REQUEST_OVERDUE,
            NotificationEvent.EVIDENCE_REQUEST_OVERDUE,
        )
    )
    details = {
        "evidence_request_id": str(request.id),
        "recipient": request.recipient,
        "requested_by": request.created_by,
        "due_on": str(request.due_on),
        "requirements": list(request.requirements),
    }
    run = session.scalar(
        select(WorkflowRun)
        .where(WorkflowRun.assessment_id == request.assessment_id)
        .order_by(WorkflowRun.created_at.desc())
        .limit(1)
    )
    if run is not None:
        append_audit(session, run, audit, None, details, now, SWEEPER)
    return notify(
        session,
        event_id=event_id(request.id, event.value),
        tenant_id=request.tenant_id,
        run_id=run.id if run is not None else None,
        event=event,
        payload={"assessment_id": str(request.assessment_id), **details},
        now=now,
    )
