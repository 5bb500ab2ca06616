"""Evidence expiry: remind a document's owner before its date, mark it expired on it.

Each stage happens once per document and date: the reminder sets `reminded_at` (a new
date clears it), the expiry moves the document from `current` to `expired` by a guarded
UPDATE, so two sweeps at once do each once. Both append an audit event on the
assessment's latest run (when it has one) and record a notification for the tenant's
webhooks; the owner's queue (`GET /api/v1/evidence/queue?owner=`) lists the same
documents. An expiry starts a reassessment of what cited the document.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.config.sweep_registry import sweep
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.documents import CURRENT, EXPIRED
from orchestrator.contracts.events import NotificationEvent, event_id
from orchestrator.db.models import Document, WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.engine.audit_rows import append_audit
from orchestrator.engine.tenant_events import dispatch, notify
from orchestrator.service.reassessments import start_reassessment
from orchestrator.sweeps.sweep_actions import SWEEPER


@sweep("evidence")
def sweep_evidence_expiry(now: datetime | None = None) -> dict[str, int]:
    now = now or utcnow()
    today = now.date()
    horizon = today + timedelta(days=get_settings().sweeps.evidence_remind_days)
    deliveries: list[int] = []
    after: list[Callable[[], None]] = []
    reminded = expired = 0
    with transaction() as session:
        due = session.scalars(
            select(Document)
            .where(
                Document.life_status == CURRENT,
                Document.expires_on.is_not(None),
                Document.expires_on <= horizon,
            )
            .order_by(Document.expires_on, Document.id)
            .with_for_update(skip_locked=True)
        ).all()
        for document in due:
            assert document.expires_on is not None
            if document.expires_on <= today:
                if _expire(session, document, now):
                    expired += 1
                    deliveries += _announce(session, document, now, expired=True)
                    after.append(
                        start_reassessment(
                            session,
                            tenant_id=document.tenant_id,
                            assessment_id=document.assessment_id,
                            trigger="expired",
                            trigger_key=f"expired:{document.id}:{document.expires_on}",
                            changed=[document.id],
                            actor_id=SWEEPER,
                        )
                    )
            elif document.reminded_at is None:
                document.reminded_at = now
                reminded += 1
                deliveries += _announce(session, document, now, expired=False)
    dispatch(deliveries)
    for send in after:
        send()
    return {"reminded": reminded, "expired": expired}


def _expire(session: Session, document: Document, now: datetime) -> bool:
    changed = session.execute(
        update(Document)
        .where(Document.id == document.id, Document.life_status == CURRENT)
        .values(life_status=EXPIRED, expired_at=now)
        .returning(Document.id)
        .execution_options(synchronize_session="fetch")
    ).first()
    return changed is not None


def _announce(session: Session, document: Document, now: datetime, *, expired: bool) -> list[int]:
    audit, event, mark = (
        (
            AuditEventType.LIFECYCLE_WORKFLOW_EVIDENCE_EXPIRED,
            NotificationEvent.EVIDENCE_EXPIRED,
            "evidence_expired",
        )
        if expired
        else (
            AuditEventType.LIFECYCLE_WORKFLOW_EVIDENCE_REMINDER_SENT,
            NotificationEvent.EVIDENCE_EXPIRING,
            "evidence_reminder",
        )
    )
    details = {
        "document_id": str(document.id),
        "filename": document.filename,
        "owner": document.owner,
        "expires_on": str(document.expires_on),
        "series_version": document.series_version,
    }
    run = _latest_run(session, document.assessment_id)
    if run is not None:
        append_audit(session, run, audit, None, details, now, SWEEPER)
    return notify(
        session,
        event_id=event_id(document.id, mark, document.expires_on),
        tenant_id=document.tenant_id,
        run_id=run.id if run is not None else None,
        event=event,
        payload={"assessment_id": str(document.assessment_id), **details},
        now=now,
    )


def _latest_run(session: Session, assessment_id: uuid.UUID) -> WorkflowRun | None:
    return session.scalar(
        select(WorkflowRun)
        .where(WorkflowRun.assessment_id == assessment_id)
        .order_by(WorkflowRun.created_at.desc())
        .limit(1)
    )
