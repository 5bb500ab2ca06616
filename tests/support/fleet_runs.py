"""Helpers for integration tests: start an assessment with documents, read what happened."""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path

from sqlalchemy import func, select

from orchestrator.contracts.identity import Actor
from orchestrator.db.models import AuditEvent, DocumentChunk, Job, StepExecution
from orchestrator.db.session import transaction
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import create_assessment, start_lifecycle
from orchestrator.service.read_models import RunView
from tests.support.roles import grant

SAMPLES = Path(__file__).resolve().parents[2] / "orchestrator" / "demo" / "samples"


def new_tenant() -> tuple[Actor, Actor]:
    tenant = f"tenant-{uuid.uuid4().hex[:8]}"
    return (
        Actor(tenant, "user:owner@example.org"),
        grant(Actor(tenant, "user:reviewer@example.org")),
    )


def start_assessment(owner: Actor, documents: int = 2) -> RunView:
    assessment = create_assessment(owner, "org-1", "Integration assessment")
    for path in sorted(SAMPLES.iterdir())[:documents]:
        upload_document(owner, assessment.id, path.name, path.read_bytes())
    return start_lifecycle(owner, assessment.id, idempotency_key=f"start-{assessment.id}")


def step_counts(run_id: uuid.UUID) -> Counter[tuple[str, str]]:
    with transaction() as session:
        rows = session.execute(
            select(StepExecution.step, StepExecution.status).where(StepExecution.run_id == run_id)
        ).all()
    return Counter((step, status) for step, status in rows)


def audit_counts(run_id: uuid.UUID) -> Counter[tuple[str, str | None]]:
    with transaction() as session:
        rows = session.execute(
            select(AuditEvent.event_type, AuditEvent.step).where(AuditEvent.run_id == run_id)
        ).all()
    return Counter((event, step) for event, step in rows)


def jobs_of(run_id: uuid.UUID) -> list[Job]:
    with transaction() as session:
        return list(session.scalars(select(Job).where(Job.run_id == run_id)))


def chunk_count(assessment_id: uuid.UUID) -> int:
    with transaction() as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(DocumentChunk)
                .where(DocumentChunk.assessment_id == assessment_id)
            )
            or 0
        )
