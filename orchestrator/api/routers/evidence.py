"""Evidence with a life: a document's owner and dates, its versions, and the owner's queue."""

from __future__ import annotations

from datetime import date
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.auth import Reader, Signaller
from orchestrator.api.dependencies import IdempotencyHeader
from orchestrator.api.document_upload import upload_once, upload_route
from orchestrator.api.paths import AssessmentId, DocumentId
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.text import Text
from orchestrator.service.document_versions import document_versions, upload_document_version
from orchestrator.service.evidence_life import DocumentLifeView, owner_queue, set_document_life

router = APIRouter(
    prefix="/api/v1",
    tags=["evidence"],
    responses=problem_responses(400, 401, 403, 404, 422),
)


class DocumentLife(BaseModel):
    model_config = ConfigDict(extra="forbid")

    owner: Text | None = Field(None, max_length=256, description="Who keeps the document")
    effective_on: date | None = Field(None, description="The date it takes effect")
    review_every_days: int | None = Field(
        None, gt=0, le=3650, description="Reviewed this often: expires this long after effect"
    )
    expires_on: date | None = Field(None, description="An explicit expiry date (wins)")


@router.put(
    "/assessments/{assessmentId}/documents/{documentId}/life",
    response_model=DocumentLifeView,
    summary="Set a document's owner, effective date and expiry",
    description="The expiry is `expires_on`, else `effective_on` + `review_every_days`. The "
    "evidence sweep reminds the owner before it and marks the document expired on it.",
)
def put_life(
    assessment_id: AssessmentId, document_id: DocumentId, body: DocumentLife, principal: Signaller
) -> DocumentLifeView:
    return set_document_life(
        principal.actor,
        assessment_id,
        document_id,
        owner=body.owner,
        effective_on=body.effective_on,
        review_every_days=body.review_every_days,
        expires_on=body.expires_on,
    )


@router.get(
    "/assessments/{assessmentId}/documents/{documentId}/versions",
    response_model=list[DocumentLifeView],
    summary="Every version of a document, oldest first",
)
def versions(
    assessment_id: AssessmentId, document_id: DocumentId, principal: Reader
) -> list[DocumentLifeView]:
    return document_versions(principal.actor, assessment_id, document_id)


@router.post(
    "/assessments/{assessmentId}/documents/{documentId}/versions",
    summary="Upload a new version of a document",
    description="multipart/form-data with one `file` part, checked like any upload. The "
    "version in force becomes `superseded` (kept, with what cited it); the same content as "
    "a document already uploaded answers 200 with `duplicate: true` and makes no version.",
    **upload_route(409, 413, 415),
)
async def upload_version(
    assessment_id: AssessmentId,
    document_id: DocumentId,
    request: Request,
    principal: Signaller,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    store = partial(upload_document_version, principal.actor, assessment_id, document_id)
    return await upload_once(request, principal, assessment_id, idempotency_key, store)


@router.get(
    "/evidence/queue",
    response_model=list[DocumentLifeView],
    summary="What an owner must renew",
    description="The owner's documents in force or expired whose expiry falls within "
    "`within_days` (or has passed), soonest first.",
)
def queue(
    principal: Reader,
    owner: Annotated[Text, Query(min_length=1, max_length=256)],
    within_days: Annotated[int, Query(ge=0, le=3650)] = 30,
) -> list[DocumentLifeView]:
    return owner_queue(principal.actor, owner, within_days=within_days)
