"""Gate readiness: what is still undecided on each draft a person must approve."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from orchestrator.api.auth import Reader
from orchestrator.api.paths import ArtifactId, RunId
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.service.readiness import artifact_readiness, gate_readiness

router = APIRouter(
    prefix="/api/v1/workflows",
    tags=["approvals"],
    responses=problem_responses(400, 401, 403, 404, 422),
)


class ReadinessView(BaseModel):
    artifact_kind: ArtifactKind
    version: int
    rows: int
    undecided: int
    undecided_rows: list[str]
    what: str
    required: bool
    unapproved_inputs: list[str]
    basis_required: bool | None = Field(
        None, description="SoA only: the gate's policy refuses rows with no basis."
    )
    no_basis: int | None = Field(
        None,
        description="SoA only: applicable rows no treated risk of the organisation's "
        "register, stated legal or contractual requirement, or exclusion reason rests on "
        "(ISO/IEC 27001 6.1.3 d), read against the register as it stands.",
    )
    no_basis_rows: list[str] | None = Field(None, description="SoA only: those rows' names.")
    ready: bool
    refusal: str | None


class GateView(ReadinessView):
    artifact_id: str
    approved: bool


@router.get(
    "/{workflowRunId}/artifacts/{artifactId}/readiness",
    response_model=ReadinessView,
    summary="What is undecided on a draft",
    description="Rows nobody decided (SoA rows without a reviewer-set implementation "
    "status, gap findings and POA&M items without an owner) and, for the report, inputs "
    "nobody approved; `refusal` is the reason an approval of this version would be refused "
    "under the run's gate policy (null: an approval may be recorded).",
)
def readiness(run_id: RunId, artifact_id: ArtifactId, principal: Reader) -> dict[str, Any]:
    return artifact_readiness(principal.actor, run_id, artifact_id).to_json()


@router.get(
    "/{workflowRunId}/gates",
    response_model=list[GateView],
    summary="Each gate's current draft and what is undecided on it",
)
def gates(run_id: RunId, principal: Reader) -> list[dict[str, Any]]:
    return gate_readiness(principal.actor, run_id)
