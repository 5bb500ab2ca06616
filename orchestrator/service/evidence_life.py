"""Evidence with a life: a document's owner, the date it takes effect, how often it is
reviewed or when it expires, and the queue of what its owner must renew.

The expiry date is the one given, or the effective date plus the review cadence. The
evidence sweep (`orchestrator.sweeps.evidence_expiry`) reminds the owner before that date
and marks the document expired on it; a changed date reminds again.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime, timedelta

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.documents import CURRENT, EXPIRED
from orchestrator.contracts.errors import DatesOutOfOrder, InvalidInput
from orchestrator.contracts.identity import Actor
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Assessment, Document
from orchestrator.db.session import transaction
from orchestrator.service.producer import load_document


class DocumentLifeView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: uuid.UUID
    assessment_id: uuid.UUID
    filename: str
    sha256: str
    status: str
    uploaded_by: str
    created_at: datetime
    owner: str | None
    effective_on: date | None
    review_every_days: int | None
    expires_on: date | None
    series_id: uuid.UUID
    series_version: int
    superseded_by: uuid.UUID | None
    life_status: str
    reminded_at: datetime | None
    expired_at: datetime | None


def life_view(row: Document) -> DocumentLifeView:
    fields = {name: getattr(row, name) for name in DocumentLifeView.model_fields}
    return DocumentLifeView.model_validate(fields | {"series_id": row.series_id or row.id})


def expiry_date(
    effective_on: date | None, review_every_days: int | None, expires_on: date | None
) -> date | None:
    """The given expiry, else the effective date plus the cadence, else none."""
    if expires_on is not None:
        return expires_on
    if effective_on is not None and review_every_days is not None:
        return effective_on + timedelta(days=review_every_days)
    return None


@retry_busy
def set_document_life(
    actor: Actor,
    assessment_id: uuid.UUID,
    document_id: uuid.UUID,
    *,
    owner: str | None,
    effective_on: date | None,
    review_every_days: int | None,
    expires_on: date | None,
) -> DocumentLifeView:
    """Set who keeps a document and until when it holds; a new date reminds again."""
    if review_every_days is not None and review_every_days <= 0:
        raise InvalidInput("review_every_days must be a positive number of days")
    if effective_on and expires_on and expires_on <= effective_on:
        raise DatesOutOfOrder(f"the document expires ({expires_on}) before it takes effect")
    with transaction() as session:
        row = load_document(session, actor, assessment_id, document_id)
        expiry = expiry_date(effective_on, review_every_days, expires_on)
        if expiry != row.expires_on:
            row.reminded_at = None
            if row.life_status == EXPIRED and (expiry is None or expiry > utcnow().date()):
                row.life_status, row.expired_at = CURRENT, None
        row.owner = owner.strip() if owner else None
        row.effective_on, row.review_every_days = effective_on, review_every_days
        row.expires_on = expiry
        session.flush()
        return life_view(row)


def owner_queue(actor: Actor, owner: str, *, within_days: int) -> list[DocumentLifeView]:
    """The owner's current and expired documents whose date falls within `within_days`
    (or has passed), soonest first: what they must renew."""
    horizon = utcnow().date() + timedelta(days=within_days)
    with transaction() as session:
        rows = session.execute(
            select(Document, Assessment.organization_id)
            .join(Assessment, Assessment.id == Document.assessment_id)
            .where(
                Document.tenant_id == actor.tenant_id,
                Document.owner == owner,
                Document.life_status.in_((CURRENT, EXPIRED)),
                Document.expires_on.is_not(None),
                Document.expires_on <= horizon,
            )
            .order_by(Document.expires_on, Document.id)
        ).all()
        return [life_view(row) for row, organization in rows if actor.sees(organization)]
