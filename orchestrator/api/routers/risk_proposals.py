"""Risks proposed by an assessment's gap findings: list them, and decide each once:
accept (a new risk in the register, linked to the finding), merge (the finding linked to a
risk held) or reject (with a reason)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.auth import Reader, Signaller
from orchestrator.api.paths import AssessmentId
from orchestrator.api.problems import problem_responses
from orchestrator.api.routers.risks import LongText, Rating, RequirementBody, ShortText
from orchestrator.contracts.risk_method import ProposalStatus
from orchestrator.contracts.text import Text
from orchestrator.service.risk_proposals import (
    RiskProposalView,
    Selection,
    accept_proposal,
    get_proposal,
    merge_proposal,
    reject_proposal,
    risk_proposals,
)
from orchestrator.service.risks import RequirementRef

router = APIRouter(
    prefix="/api/v1",
    tags=["risk proposals"],
    responses=problem_responses(400, 401, 403, 404, 422),
)

ProposalId = Annotated[uuid.UUID, Path(alias="proposalId")]
Note = Annotated[Text, Field(max_length=4000)]


class ProposalAcceptance(BaseModel):
    """What the person keeps of the proposal; a field left out is taken as proposed."""

    model_config = ConfigDict(extra="forbid")

    owner: Annotated[Text, Field(min_length=1, max_length=256)] = Field(
        description="The person who owns the risk (a principal id or email)"
    )
    title: ShortText | None = None
    likelihood: Rating | None = None
    impact: Rating | None = None
    treatment_plan: Annotated[Text, Field(max_length=4000)] | None = None
    controls: list[Annotated[Text, Field(min_length=1, max_length=64)]] | None = Field(
        None, max_length=200, description="The SCF control ids selected (default: proposed)"
    )
    requirements: list[RequirementBody] | None = Field(
        None, max_length=200, description="The requirements selected (default: proposed)"
    )
    note: Note | None = None

    def selection(self) -> Selection:
        refs = (
            None
            if self.requirements is None
            else [RequirementRef(**r.model_dump()) for r in self.requirements]
        )
        fields = self.model_dump(exclude={"requirements", "note"})
        return Selection(**fields, requirements=refs)


class ProposalMerge(BaseModel):
    model_config = ConfigDict(extra="forbid")

    risk_id: uuid.UUID = Field(description="A risk of the organisation's register")
    note: Note | None = None


class ProposalRejection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: LongText = Field(description="Why the finding raises no risk to register")


@router.get(
    "/assessments/{assessmentId}/risk-proposals",
    response_model=list[RiskProposalView],
    summary="The risks the assessment's gap findings proposed, undecided first",
)
def index(
    assessment_id: AssessmentId,
    principal: Reader,
    status: Annotated[ProposalStatus | None, Query()] = None,
) -> list[RiskProposalView]:
    return risk_proposals(principal.actor, assessment_id, status)


@router.get(
    "/risk-proposals/{proposalId}",
    response_model=RiskProposalView,
    summary="A risk proposal, its reason and its decision",
)
def read(proposal_id: ProposalId, principal: Reader) -> RiskProposalView:
    return get_proposal(principal.actor, proposal_id)


@router.post(
    "/risk-proposals/{proposalId}/accept",
    response_model=RiskProposalView,
    responses=problem_responses(409),
    summary="Accept a proposal: a new risk in the register, linked to its finding",
    description="The risk takes the proposal's content with the owner given and the "
    "controls and requirements selected. Refused with `risk_proposal_decided` (409) once "
    "the proposal was decided; `unknown_catalogue_id` (422) for an id the catalogues lack.",
)
def accept(
    proposal_id: ProposalId, body: ProposalAcceptance, principal: Signaller
) -> RiskProposalView:
    return accept_proposal(principal.actor, proposal_id, body.selection(), body.note)


@router.post(
    "/risk-proposals/{proposalId}/merge",
    response_model=RiskProposalView,
    responses=problem_responses(409),
    summary="Merge a proposal: its finding linked to a risk the register holds",
)
def merge(proposal_id: ProposalId, body: ProposalMerge, principal: Signaller) -> RiskProposalView:
    return merge_proposal(principal.actor, proposal_id, body.risk_id, body.note)


@router.post(
    "/risk-proposals/{proposalId}/reject",
    response_model=RiskProposalView,
    responses=problem_responses(409),
    summary="Reject a proposal, with the reason; nothing enters the register",
)
def reject(
    proposal_id: ProposalId, body: ProposalRejection, principal: Signaller
) -> RiskProposalView:
    return reject_proposal(principal.actor, proposal_id, body.reason)
