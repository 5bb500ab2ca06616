"""Assessments and their documents."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from orchestrator.api.auth import Reader, Signaller
from orchestrator.api.dependencies import Cursor, IdempotencyHeader, Limit
from orchestrator.api.document_upload import upload_once, upload_route
from orchestrator.api.idempotency import StoredResponse, run_post_once
from orchestrator.api.paths import AssessmentId, assessment_location
from orchestrator.api.problems import problem_responses
from orchestrator.api.schemas import CreateAssessment, Page
from orchestrator.service.documents import upload_document_file
from orchestrator.service.producer import create_assessment
from orchestrator.service.queries import get_assessment, list_assessments, list_documents
from orchestrator.service.read_models import AssessmentView, DocumentView

router = APIRouter(
    prefix="/api/v1/assessments",
    tags=["assessments"],
    responses=problem_responses(400, 401, 403, 404, 422),
)


@router.post(
    "",
    status_code=201,
    response_model=AssessmentView,
    responses=problem_responses(409, 413),
    summary="Create an assessment",
)
def create(
    body: CreateAssessment,
    request: Request,
    principal: Signaller,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    def action() -> StoredResponse:
        view = create_assessment(
            principal.actor,
            body.organization_id,
            body.name,
            carry_over_from=body.carry_over_from,
        )
        return StoredResponse(
            201, view.model_dump(mode="json"), {"Location": assessment_location(view.id)}
        )

    return run_post_once(principal, request, body, idempotency_key, action)


@router.get("", response_model=Page[AssessmentView], summary="List assessments")
def index(principal: Reader, limit: Limit = 50, cursor: Cursor = None) -> Page[AssessmentView]:
    page = list_assessments(principal.actor, limit=limit, cursor=cursor)
    return Page(items=page.items, next_cursor=page.next_cursor)


@router.get("/{assessmentId}", response_model=AssessmentView, summary="Read an assessment")
def read(assessment_id: AssessmentId, principal: Reader) -> AssessmentView:
    return get_assessment(principal.actor, assessment_id)


@router.get(
    "/{assessmentId}/documents",
    response_model=list[DocumentView],
    summary="List an assessment's documents",
)
def documents(assessment_id: AssessmentId, principal: Reader) -> list[DocumentView]:
    return list_documents(principal.actor, assessment_id)


@router.post(
    "/{assessmentId}/documents",
    summary="Upload a document",
    description="multipart/form-data with one `file` part, streamed to storage. The size "
    "limit and the type are checked on the content; a duplicate of a document "
    "already uploaded answers 200 with `duplicate: true`. Uploading records "
    "`documents_uploaded` for the assessment's active run.",
    **upload_route(400, 409, 413, 415),
)
async def upload(
    assessment_id: AssessmentId,
    request: Request,
    principal: Signaller,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    store = partial(upload_document_file, principal.actor, assessment_id)
    return await upload_once(request, principal, assessment_id, idempotency_key, store)
