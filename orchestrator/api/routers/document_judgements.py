"""A document's judgement (its kind, whether it was adopted) and reviewers' amendments to it."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.auth import Approver, Reader
from orchestrator.api.dependencies import IdempotencyHeader
from orchestrator.api.idempotency import StoredResponse, check_key, request_hash, run_once
from orchestrator.api.model_rules import at_least_one_of
from orchestrator.api.paths import AssessmentId, DocumentId
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.text import NOT_BLANK, Text
from orchestrator.service.document_judgements import (
    DocumentJudgementView,
    amend_document_judgement,
    document_judgement,
)

router = APIRouter(
    prefix="/api/v1/assessments",
    tags=["documents"],
    responses=problem_responses(400, 401, 403, 404, 422),
)


class JudgementAmendment(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=at_least_one_of("kind", "adoption"))

    kind: Literal["policy", "standard", "procedure", "plan", "record"] | None = Field(
        None, description="What the document is; records show a practice operating"
    )
    adoption: Literal["adopted", "template_not_adopted"] | None = Field(
        None, description="template_not_adopted sets every passage of the document aside"
    )
    reason: Text = Field(min_length=1, max_length=2000, pattern=NOT_BLANK)


@router.get(
    "/{assessmentId}/documents/{documentId}/judgement",
    response_model=DocumentJudgementView,
    summary="How the next draft judges a document",
    description="Its kind and adoption as the latest evidence analysis judged them from the "
    "text, with reviewers' amendments over them, and every amendment.",
)
def read(
    assessment_id: AssessmentId, document_id: DocumentId, principal: Reader
) -> DocumentJudgementView:
    return document_judgement(principal.actor, assessment_id, document_id)


@router.post(
    "/{assessmentId}/documents/{documentId}/judgement",
    response_model=DocumentJudgementView,
    responses=problem_responses(409),
    summary="Amend a document's kind or adoption",
    description="A reviewer sets the kind and/or adoption with a reason; it is kept with "
    "who, when and the values before, audited on the assessment's run, and the next draft "
    "follows it.",
)
async def amend(
    assessment_id: AssessmentId,
    document_id: DocumentId,
    body: JudgementAmendment,
    request: Request,
    principal: Approver,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    key = check_key(idempotency_key)

    def action() -> StoredResponse:
        view = amend_document_judgement(
            principal.actor,
            assessment_id,
            document_id,
            kind=body.kind,
            adoption=body.adoption,
            reason=body.reason,
            idempotency_key=key,
        )
        return StoredResponse(200, view.model_dump(mode="json"), {})

    fingerprint = request_hash("POST", request.url.path, body.model_dump(mode="json"))
    return await run_in_threadpool(run_once, principal, key, fingerprint, action)
