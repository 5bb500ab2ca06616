"""Reassessments of what changed, the row-level approvals they ask for, and adoptions of
a new catalogue version (which start one)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.auth import Approver, Reader, Signaller
from orchestrator.api.dependencies import IdempotencyHeader, signal_key
from orchestrator.api.field_kinds import IdempotencyKey
from orchestrator.api.idempotency import StoredResponse, run_post_once
from orchestrator.api.paths import AssessmentId
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.text import Text
from orchestrator.service.catalogue_adoption import (
    AdoptionView,
    adopt_catalogue,
    catalogue_diff,
    list_adoptions,
)
from orchestrator.service.reassessments import (
    ReassessmentView,
    approve_row,
    get_reassessment,
    list_reassessments,
    retry_reassessment,
)

router = APIRouter(
    prefix="/api/v1",
    tags=["reassessments"],
    responses=problem_responses(400, 401, 403, 404, 409, 422),
)

ReassessmentId = Annotated[uuid.UUID, Path(alias="reassessmentId")]


class RowApprovalBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    row: Text = Field(min_length=1, max_length=300, description='"<framework> <requirement>"')
    row_sha256: str = Field(
        min_length=64, max_length=64, description="The row's content hash, as read"
    )
    comment: Text | None = Field(None, max_length=2000)


@router.get(
    "/assessments/{assessmentId}/reassessments",
    response_model=list[ReassessmentView],
    summary="An assessment's reassessments, oldest first",
)
def index(assessment_id: AssessmentId, principal: Reader) -> list[ReassessmentView]:
    return list_reassessments(principal.actor, assessment_id)


@router.get(
    "/reassessments/{reassessmentId}",
    response_model=ReassessmentView,
    summary="A reassessment: its figures and the rows it changed",
)
def read(reassessment_id: ReassessmentId, principal: Reader) -> ReassessmentView:
    return get_reassessment(principal.actor, reassessment_id)


@router.post(
    "/reassessments/{reassessmentId}/row-approvals",
    response_model=ReassessmentView,
    summary="Approve one changed row of a reassessment",
    description="Names the row and the content hash read; a row changed since is refused. "
    "The reassessed SoA version is approved with its last changed row; the approval of "
    "the version it started from covers every other row.",
)
def approve(
    reassessment_id: ReassessmentId, body: RowApprovalBody, principal: Approver
) -> ReassessmentView:
    return approve_row(
        principal.actor,
        reassessment_id,
        body.row,
        row_sha256_seen=body.row_sha256,
        comment=body.comment,
    )


@router.post(
    "/reassessments/{reassessmentId}/retry",
    response_model=ReassessmentView,
    summary="Retry a failed reassessment",
    description="Sends a failed reassessment's evaluation again (audited); it is `pending` "
    "until the job ends. Anything but a failed reassessment is refused (409 "
    "`reassessment_not_failed`); the same Idempotency-Key again answers the first retry.",
)
def retry(
    reassessment_id: ReassessmentId,
    request: Request,
    principal: Signaller,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    def action() -> StoredResponse:
        view = retry_reassessment(principal.actor, reassessment_id)
        return StoredResponse(200, view.model_dump(mode="json"), {})

    return run_post_once(principal, request, None, idempotency_key, action)


Target = Annotated[
    Text,
    Query(
        min_length=1,
        max_length=300,
        description='A catalogue version: its id, "NAME VERSION" or the version alone.',
    ),
]


class AdoptionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: Text = Field(min_length=1, max_length=300, description="The catalogue version")
    reason: Text = Field(min_length=1, max_length=2000)
    idempotency_key: IdempotencyKey | None = None


@router.get(
    "/assessments/{assessmentId}/catalogue-diff",
    summary="What adopting another catalogue version would change",
    description="SCF controls added, removed and reworded (verbatim text before and "
    "after), requirements remapped (their linked controls changed), from the version the "
    "assessment uses to `to`; and the rows of its last approved SoA an adoption re-opens.",
)
def catalogue_diff_of(assessment_id: AssessmentId, principal: Reader, to: Target) -> dict[str, Any]:
    return catalogue_diff(principal.actor, assessment_id, to)


@router.get(
    "/assessments/{assessmentId}/catalogue-adoptions",
    response_model=list[AdoptionView],
    summary="An assessment's catalogue adoptions, oldest first",
)
def adoptions(assessment_id: AssessmentId, principal: Reader) -> list[AdoptionView]:
    return list_adoptions(principal.actor, assessment_id)


@router.post(
    "/assessments/{assessmentId}/catalogue-adoptions",
    response_model=AdoptionView,
    status_code=201,
    summary="Adopt another catalogue version",
    description="Records the adoption (audited), makes the assessment use the version and "
    "starts a reassessment re-opening exactly the rows whose requirement was remapped or "
    "whose linked controls were reworded or removed. The version already in use changes "
    "nothing (200, `already_in_use`); the same key again answers the same adoption (200).",
)
def adopt(
    assessment_id: AssessmentId,
    body: AdoptionBody,
    principal: Signaller,
    response: Response,
    idempotency_key: IdempotencyHeader = None,
) -> AdoptionView:
    key = signal_key(idempotency_key, body.idempotency_key)
    view = adopt_catalogue(
        principal.actor, assessment_id, body.target, reason=body.reason, idempotency_key=key
    )
    if view.duplicate or view.status == "already_in_use":
        response.status_code = 200
    return view
