"""Evidence requests to people outside the product, answered through a link.

An assessor names the requirements, the recipient, instructions and a due date; the link
(`/w/evidence/<request id>.<secret>`) carries a random 256-bit secret of which only the
hash is stored. It is bound to one request of one tenant's assessment, accepts uploads
until it expires (`link_expires_at`) or is revoked, at most `UPLOADS_PER_HOUR` an hour.
Uploads take the same path as the API's (content typing, size and archive limits); each
is attributed to the request, lands in its assessment and, when an approved SoA exists,
starts a reassessment of what it touches.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import (
    DateInPast,
    LinkRefused,
    NotFound,
    TooManyAttempts,
)
from orchestrator.contracts.identity import Actor
from orchestrator.db.busy import retry_busy
from orchestrator.db.continuous_models import EvidenceRequest, EvidenceRequestUpload
from orchestrator.db.models import Document
from orchestrator.db.session import transaction
from orchestrator.db.sql import aware
from orchestrator.service.documents import upload_document_file
from orchestrator.service.producer import load_assessment
from orchestrator.service.read_models import DocumentView
from orchestrator.service.reassessments import start_reassessment

OPEN, ANSWERED, REVOKED = "open", "answered", "revoked"
UPLOADS_PER_HOUR = 20
#: A link outlives its due date by this long, so a late answer still lands.
LINK_GRACE = timedelta(days=14)
PUBLIC_PREFIX = "/w/evidence/"


class EvidenceRequestView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: uuid.UUID
    assessment_id: uuid.UUID
    requirements: list[str]
    recipient: str
    instructions: str
    due_on: date
    link_expires_at: datetime
    status: str
    created_by: str
    created_at: datetime
    answered_at: datetime | None
    revoked_at: datetime | None
    documents: list[uuid.UUID]


class IssuedRequest(BaseModel):
    """A new request and its link, shown once."""

    request: EvidenceRequestView
    link: str


class PublicRequest(BaseModel):
    """What the link's page shows: nothing of the assessment beyond the request."""

    recipient: str
    requirements: list[str]
    instructions: str
    due_on: date
    link_expires_at: datetime
    uploaded: int


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _view(session: Session, row: EvidenceRequest) -> EvidenceRequestView:
    documents = session.scalars(
        select(EvidenceRequestUpload.document_id)
        .where(EvidenceRequestUpload.request_id == row.id)
        .order_by(EvidenceRequestUpload.id)
    ).all()
    return EvidenceRequestView(
        id=row.id,
        assessment_id=row.assessment_id,
        requirements=list(row.requirements),
        recipient=row.recipient,
        instructions=row.instructions,
        due_on=row.due_on,
        link_expires_at=aware(row.link_expires_at),
        status=row.status,
        created_by=row.created_by,
        created_at=aware(row.created_at),
        answered_at=aware(row.answered_at) if row.answered_at else None,
        revoked_at=aware(row.revoked_at) if row.revoked_at else None,
        documents=list(documents),
    )


@retry_busy
def create_request(
    actor: Actor,
    assessment_id: uuid.UUID,
    *,
    requirements: list[str],
    recipient: str,
    instructions: str,
    due_on: date,
    link_expires_at: datetime | None = None,
) -> IssuedRequest:
    now = utcnow()
    if due_on < now.date():
        raise DateInPast(f"the due date {due_on} has passed")
    if link_expires_at is not None and link_expires_at.tzinfo is None:
        link_expires_at = link_expires_at.replace(tzinfo=UTC)  # a time without zone is UTC
    expires = link_expires_at or datetime.combine(due_on, datetime.min.time(), UTC)
    if link_expires_at is None:  # the grace runs to the end of the calendar at most
        expires = expires + min(LINK_GRACE, datetime.max.replace(tzinfo=UTC) - expires)
    if expires <= now:
        raise DateInPast("the link would expire before it is sent")
    secret = secrets.token_urlsafe(32)
    with transaction() as session:
        load_assessment(session, actor, assessment_id)
        row = EvidenceRequest(
            tenant_id=actor.tenant_id,
            assessment_id=assessment_id,
            requirements=requirements,
            recipient=recipient,
            instructions=instructions,
            due_on=due_on,
            link_expires_at=expires,
            token_sha256=_hash(secret),
            status=OPEN,
            window_uploads=0,
            created_by=actor.actor_id,
            created_at=now,
        )
        session.add(row)
        session.flush()
        return IssuedRequest(request=_view(session, row), link=f"{PUBLIC_PREFIX}{row.id}.{secret}")


def _load(session: Session, actor: Actor, request_id: uuid.UUID) -> EvidenceRequest:
    row = session.get(EvidenceRequest, request_id)
    if row is None or row.tenant_id != actor.tenant_id:
        raise NotFound(f"evidence request {request_id} not found")
    load_assessment(session, actor, row.assessment_id)
    return row


@retry_busy
def revoke_request(actor: Actor, request_id: uuid.UUID) -> EvidenceRequestView:
    with transaction() as session:
        row = _load(session, actor, request_id)
        if row.status != REVOKED:
            row.status, row.revoked_at = REVOKED, utcnow()
        session.flush()
        return _view(session, row)


def list_requests(actor: Actor, assessment_id: uuid.UUID) -> list[EvidenceRequestView]:
    with transaction() as session:
        load_assessment(session, actor, assessment_id)
        rows = session.scalars(
            select(EvidenceRequest)
            .where(EvidenceRequest.assessment_id == assessment_id)
            .order_by(EvidenceRequest.created_at, EvidenceRequest.id)
        ).all()
        return [_view(session, row) for row in rows]


def _by_slug(session: Session, slug: str, *, lock: bool = False) -> EvidenceRequest:
    """The request a link names; NotFound for any link that is not one of ours."""
    request_id, _, secret = slug.partition(".")
    try:
        wanted = uuid.UUID(request_id)
    except ValueError:
        raise NotFound("no such link") from None
    row = session.get(EvidenceRequest, wanted, with_for_update=lock)
    if row is None or not secret or not secrets.compare_digest(row.token_sha256, _hash(secret)):
        raise NotFound("no such link")
    if row.status == REVOKED:
        raise LinkRefused("this link was revoked")
    if aware(row.link_expires_at) <= utcnow():
        raise LinkRefused("this link has expired")
    return row


def public_request(slug: str) -> PublicRequest:
    with transaction() as session:
        row = _by_slug(session, slug)
        uploaded = len(_view(session, row).documents)
        return PublicRequest(
            recipient=row.recipient,
            requirements=list(row.requirements),
            instructions=row.instructions,
            due_on=row.due_on,
            link_expires_at=row.link_expires_at,
            uploaded=uploaded,
        )


@retry_busy
def _count_attempt(slug: str) -> tuple[uuid.UUID, Actor]:
    """Check the link and count this upload in its hourly window (refused past the limit);
    the assessment it uploads into and who it uploads as."""
    now = utcnow()
    with transaction() as session:
        row = _by_slug(session, slug, lock=True)
        if row.window_start is None or now - aware(row.window_start) >= timedelta(hours=1):
            row.window_start, row.window_uploads = now, 0
        if row.window_uploads >= UPLOADS_PER_HOUR:
            raise TooManyAttempts(
                f"this link took {UPLOADS_PER_HOUR} uploads in the last hour; try again later"
            )
        row.window_uploads += 1
        return row.assessment_id, Actor(
            tenant_id=row.tenant_id, actor_id=f"evidence-request:{row.id}"
        )


def upload_through_link(
    slug: str, filename: str, path: Path, *, declared_media_type: str | None = None
) -> DocumentView:
    """Upload a file through a request's link: into that request's assessment only."""
    assessment_id, actor = _count_attempt(slug)

    def attribute(session: Session, document: Document) -> Callable[[], None]:
        row = _by_slug(session, slug, lock=True)  # revoked meanwhile: nothing is kept
        session.add(
            EvidenceRequestUpload(
                request_id=row.id, document_id=document.id, created_at=document.created_at
            )
        )
        if row.status == OPEN:
            row.status, row.answered_at = ANSWERED, document.created_at
        return start_reassessment(
            session,
            tenant_id=row.tenant_id,
            assessment_id=row.assessment_id,
            trigger="request_answered",
            trigger_key=f"request_answered:{document.id}",
            changed=[document.id],
            actor_id=actor.actor_id,
        )

    return upload_document_file(
        actor,
        assessment_id,
        filename,
        path,
        declared_media_type=declared_media_type,
        on_recorded=attribute,
    )
