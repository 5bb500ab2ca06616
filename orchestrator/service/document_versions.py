"""Versions of a document: a new upload of the same logical document replaces the version
in force and keeps the history (and what cited each version).

The new content goes through the same checks as any upload (`service.documents`); an
upload whose content equals a document of the assessment is a duplicate and makes no
version. The version it replaces becomes `superseded`, and its passages stop being
evidence for later drafts; drafts that cited it keep their citations.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from orchestrator.contracts.documents import SUPERSEDED
from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.identity import Actor, Kick
from orchestrator.db.models import Document
from orchestrator.db.session import transaction
from orchestrator.engine import messages as fleet
from orchestrator.service.documents import upload_document_file
from orchestrator.service.evidence_life import DocumentLifeView, expiry_date, life_view
from orchestrator.service.producer import load_document
from orchestrator.service.read_models import DocumentView
from orchestrator.service.reassessments import start_reassessment


def upload_document_version(
    actor: Actor,
    assessment_id: uuid.UUID,
    document_id: uuid.UUID,
    filename: str,
    path: Path,
    *,
    declared_media_type: str | None = None,
    kick: Kick = fleet.kick,
) -> DocumentView:
    """Upload `path` as the next version of document `document_id` (any version of it);
    starts a reassessment of the last approved SoA (`service.reassessments`)."""

    def link(session: Session, document: Document) -> Callable[[], None]:
        previous = load_document(session, actor, assessment_id, document_id)
        series = previous.series_id or previous.id
        current = session.scalar(
            select(Document)
            .where(
                *_in_series(assessment_id, series),
                Document.life_status != SUPERSEDED,
                Document.id != document.id,
            )
            .with_for_update()
        )
        if current is None:
            raise InvalidInput(f"document {document_id} has no version in force to replace")
        current.series_id = series
        document.series_id = series
        document.series_version = current.series_version + 1
        document.owner = current.owner
        document.review_every_days = current.review_every_days
        document.effective_on = document.created_at.date()
        document.expires_on = expiry_date(document.effective_on, current.review_every_days, None)
        current.life_status, current.superseded_by = SUPERSEDED, document.id
        session.flush()
        # What an approved draft cites may be any earlier version of the document.
        earlier = session.scalars(
            select(Document.id).where(
                *_in_series(assessment_id, series),
                Document.id != document.id,
            )
        ).all()
        return start_reassessment(
            session,
            tenant_id=actor.tenant_id,
            assessment_id=assessment_id,
            trigger="new_version",
            trigger_key=f"new_version:{document.id}",
            changed=[*earlier, document.id],
            actor_id=actor.actor_id,
        )

    return upload_document_file(
        actor,
        assessment_id,
        filename,
        path,
        declared_media_type=declared_media_type,
        kick=kick,
        on_recorded=link,
    )


def _in_series(assessment_id: uuid.UUID, series: uuid.UUID) -> tuple[ColumnElement[bool], ...]:
    """A document of the series (named by its first version's id) in the assessment."""
    return (
        Document.assessment_id == assessment_id,
        (Document.series_id == series) | (Document.id == series),
    )


def document_versions(
    actor: Actor, assessment_id: uuid.UUID, document_id: uuid.UUID
) -> list[DocumentLifeView]:
    """Every version of the logical document `document_id` belongs to, oldest first."""
    with transaction() as session:
        row = load_document(session, actor, assessment_id, document_id)
        series = row.series_id or row.id
        rows = session.scalars(
            select(Document)
            .where(
                *_in_series(assessment_id, series),
            )
            .order_by(Document.series_version, Document.created_at)
        ).all()
        return [life_view(each) for each in rows]
