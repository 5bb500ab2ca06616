"""The risk register of an assessment's organisation (ISO/IEC 27001 6.1.2, 6.1.3): list and
export it, record a risk, revise it, accept its residual risk; each change a version."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.auth import Approver, Reader, Signaller
from orchestrator.api.dependencies import IdempotencyHeader
from orchestrator.api.idempotency import StoredResponse, run_post_once
from orchestrator.api.paths import API_PREFIX, AssessmentId
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.risk_method import SCALE_MAX, SCALE_MIN, TreatmentOption
from orchestrator.contracts.text import Text
from orchestrator.service.risk_exports import (
    XLSX_MEDIA_TYPE,
    render_register_csv,
    render_register_xlsx,
)
from orchestrator.service.risks import (
    RequirementRef,
    RiskContent,
    RiskRegister,
    RiskVersionView,
    accept_risk,
    create_risk,
    get_risk,
    risk_history,
    risk_register,
    update_risk,
)

router = APIRouter(
    prefix="/api/v1",
    tags=["risks"],
    responses=problem_responses(400, 401, 403, 404, 422),
)

RiskId = Annotated[uuid.UUID, Path(alias="riskId")]
Rating = Annotated[int, Field(ge=SCALE_MIN, le=SCALE_MAX)]
ShortText = Annotated[Text, Field(min_length=1, max_length=300)]
LongText = Annotated[Text, Field(min_length=1, max_length=4000)]


class RequirementBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    framework: ShortText = Field(description="A framework of the current catalogues")
    requirement_id: ShortText = Field(description="As the framework writes it: A.5.1, CC6.1")


class ResidualBody(BaseModel):
    """The risk as rated after its treatment, on the same scales."""

    model_config = ConfigDict(extra="forbid")

    likelihood: Rating
    impact: Rating


class RiskBody(BaseModel):
    """A risk as a person states it (ISO/IEC 27001 6.1.2): what is at risk, from what,
    through which weakness, how likely and how bad, who owns it and how it is treated."""

    model_config = ConfigDict(extra="forbid")

    title: ShortText
    asset: LongText = Field(description="The asset or process at risk")
    threat: LongText
    vulnerability: LongText = Field(description="The weakness the threat exploits")
    likelihood: Rating = Field(description="1 rare .. 5 almost certain (the register's method)")
    impact: Rating = Field(description="1 negligible .. 5 severe (the register's method)")
    owner: Annotated[Text, Field(min_length=1, max_length=256)] = Field(
        description="The person who owns the risk (a principal id or email)"
    )
    treatment: TreatmentOption
    treatment_plan: Annotated[Text, Field(max_length=4000)] = ""
    controls: list[Annotated[Text, Field(min_length=1, max_length=64)]] = Field(
        [], max_length=200, description="SCF control ids of the current catalogue"
    )
    requirements: list[RequirementBody] = Field([], max_length=200)
    residual: ResidualBody | None = None

    def content(self) -> RiskContent:
        fields = self.model_dump(include=set(RiskContent.model_fields) - {"requirements"})
        refs = [RequirementRef(**ref.model_dump()) for ref in self.requirements]
        residual = self.residual
        return RiskContent(
            **fields,
            requirements=refs,
            residual_likelihood=residual.likelihood if residual else None,
            residual_impact=residual.impact if residual else None,
        )


class RiskRevision(RiskBody):
    assessment_id: uuid.UUID = Field(description="The assessment the change is made through")
    expected_version: int | None = Field(
        None, ge=1, description="Refused (409) when the risk has moved past this version"
    )


class RiskAcceptance(BaseModel):
    model_config = ConfigDict(extra="forbid")

    assessment_id: uuid.UUID = Field(description="The assessment the decision is made through")
    note: LongText = Field(description="Why the residual risk is acceptable")
    expected_version: int | None = Field(
        None, ge=1, description="Refused (409) when the risk has moved past this version"
    )


@router.get(
    "/assessments/{assessmentId}/risks",
    response_model=RiskRegister,
    summary="The risk register of the assessment's organisation, with its method",
)
def register(assessment_id: AssessmentId, principal: Reader) -> RiskRegister:
    return risk_register(principal.actor, assessment_id)


@router.get(
    "/assessments/{assessmentId}/risks/export",
    response_class=Response,
    responses={
        200: {
            "content": {
                "text/csv": {"schema": {"type": "string"}},
                XLSX_MEDIA_TYPE: {"schema": {"type": "string", "format": "binary"}},
            }
        }
    },
    summary="The risk register as CSV or XLSX, its method stated above the rows",
)
def export(
    assessment_id: AssessmentId,
    principal: Reader,
    format: Annotated[Literal["csv", "xlsx"], Query()] = "csv",
) -> Response:
    found = risk_register(principal.actor, assessment_id)
    name = f"risk-register-{found.organization_id}"
    if format == "xlsx":
        body = render_register_xlsx(found, utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"))
        media = XLSX_MEDIA_TYPE
    else:
        body, media = render_register_csv(found), "text/csv; charset=utf-8"
    disposition = f'attachment; filename="{_safe(name)}.{format}"'
    return Response(body, media_type=media, headers={"Content-Disposition": disposition})


def _safe(name: str) -> str:
    """A file name a header can carry (latin-1): ASCII letters, digits, - _ . only."""
    return "".join(c if (c.isascii() and c.isalnum()) or c in "-_." else "_" for c in name)[:120]


@router.post(
    "/assessments/{assessmentId}/risks",
    status_code=201,
    response_model=RiskVersionView,
    responses=problem_responses(409),
    summary="Record a risk in the register of the assessment's organisation",
    description="Its version 1. With `Idempotency-Key`, the same request is recorded once "
    "and its answer replayed.",
)
def create(
    assessment_id: AssessmentId,
    body: RiskBody,
    request: Request,
    principal: Signaller,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    def action() -> StoredResponse:
        view = create_risk(principal.actor, assessment_id, body.content())
        location = f"{API_PREFIX}/risks/{view.risk_id}"
        return StoredResponse(201, view.model_dump(mode="json"), {"Location": location})

    return run_post_once(principal, request, body, idempotency_key, action)


@router.get("/risks/{riskId}", response_model=RiskVersionView, summary="A risk, newest version")
def read(risk_id: RiskId, principal: Reader) -> RiskVersionView:
    return get_risk(principal.actor, risk_id)


@router.get(
    "/risks/{riskId}/versions",
    response_model=list[RiskVersionView],
    summary="Every version of a risk, oldest first: who changed what, when",
)
def versions(risk_id: RiskId, principal: Reader) -> list[RiskVersionView]:
    return risk_history(principal.actor, risk_id)


@router.put(
    "/risks/{riskId}",
    response_model=RiskVersionView,
    responses=problem_responses(409),
    summary="Revise a risk: its next version; a standing acceptance is cleared",
)
def revise(risk_id: RiskId, body: RiskRevision, principal: Signaller) -> RiskVersionView:
    return update_risk(
        principal.actor,
        risk_id,
        body.assessment_id,
        body.content(),
        expected_version=body.expected_version,
    )


@router.post(
    "/risks/{riskId}/accept",
    response_model=RiskVersionView,
    responses=problem_responses(409),
    summary="Accept a risk's residual risk (never by its owner: separation of duties)",
    description="Recorded as the risk's next version with who accepted it and when. "
    "Refused with `separation_of_duties` when the caller owns the risk.",
)
def accept(risk_id: RiskId, body: RiskAcceptance, principal: Approver) -> RiskVersionView:
    return accept_risk(
        principal.actor,
        risk_id,
        body.assessment_id,
        note=body.note,
        expected_version=body.expected_version,
    )
