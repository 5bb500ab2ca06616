"""Evidence requests: an assessor issues, lists and revokes them (the recipient's page is
`orchestrator.api.routers.public_entry`)."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.auth import Reader, Signaller
from orchestrator.api.paths import AssessmentId
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.text import Text
from orchestrator.service.evidence_requests import (
    EvidenceRequestView,
    IssuedRequest,
    create_request,
    list_requests,
    revoke_request,
)

router = APIRouter(
    prefix="/api/v1",
    tags=["evidence requests"],
    responses=problem_responses(400, 401, 403, 404, 422),
)

RequestId = Annotated[uuid.UUID, Path(alias="requestId")]


class NewEvidenceRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    requirements: list[Annotated[Text, Field(min_length=1, max_length=300)]] = Field(
        min_length=1, max_length=200, description='Rows asked about: "<framework> <id>"'
    )
    recipient: Text = Field(min_length=1, max_length=256, description="Who answers (an email)")
    instructions: Text = Field(min_length=1, max_length=4000)
    due_on: date
    link_expires_at: datetime | None = Field(
        None, description="When the link stops taking uploads (default: 14 days after due)"
    )


@router.post(
    "/assessments/{assessmentId}/evidence-requests",
    status_code=201,
    response_model=IssuedRequest,
    summary="Request evidence from someone outside the product",
    description="Answers the request and its link, shown once: send it to the recipient. "
    "The link's page needs no account and takes uploads for this request only.",
)
def create(
    assessment_id: AssessmentId, body: NewEvidenceRequest, principal: Signaller
) -> IssuedRequest:
    return create_request(
        principal.actor,
        assessment_id,
        requirements=body.requirements,
        recipient=body.recipient,
        instructions=body.instructions,
        due_on=body.due_on,
        link_expires_at=body.link_expires_at,
    )


@router.get(
    "/assessments/{assessmentId}/evidence-requests",
    response_model=list[EvidenceRequestView],
    summary="An assessment's evidence requests and what arrived",
)
def index(assessment_id: AssessmentId, principal: Reader) -> list[EvidenceRequestView]:
    return list_requests(principal.actor, assessment_id)


@router.post(
    "/evidence-requests/{requestId}/revoke",
    response_model=EvidenceRequestView,
    summary="Revoke a request's link: it takes nothing more",
)
def revoke(request_id: RequestId, principal: Signaller) -> EvidenceRequestView:
    return revoke_request(principal.actor, request_id)
