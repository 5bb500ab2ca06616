"""Handoffs: effects outside the database whose fate an operator decides (docs/engine.md)."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.auth import Operator, Reader
from orchestrator.api.model_rules import at_least_one_of
from orchestrator.api.paths import RunId
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.external_effects import HandoffAction
from orchestrator.contracts.text import Text
from orchestrator.service import handoffs
from orchestrator.service.handoffs import HandoffView


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid")


router = APIRouter(
    prefix="/api/v1", tags=["handoffs"], responses=problem_responses(400, 401, 403, 404, 422)
)
HandoffId = Annotated[uuid.UUID, Path(alias="handoffId")]
_CONFLICT = problem_responses(409)


class ResolveRequest(RequestBody):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra=at_least_one_of("evidence_ref", "comment", text=True)
    )

    action: HandoffAction = Field(description="One of the handoff's `allowed_actions`.")
    evidence_ref: Annotated[Text, Field(max_length=2000)] | None = Field(
        None, description="Where the evidence is (a ticket, the target's record id, a URL)."
    )
    comment: Annotated[Text, Field(max_length=2000)] | None = Field(
        None, description="Why; an evidence reference or a comment is required."
    )
    fence: int | None = Field(
        None,
        ge=0,
        description="The fence of your claim (from claim): only that claim's holder may "
        "resolve. Without it, the claim and the resolution are one step.",
    )


@router.get(
    "/handoffs",
    response_model=list[HandoffView],
    summary="The tenant's handoffs",
    description="Open ones by default; `status=resolved` or `all` for the others.",
)
def index(
    principal: Reader, status: Literal["open", "resolved", "all"] = "open"
) -> list[HandoffView]:
    return handoffs.list_handoffs(principal.actor, status=None if status == "all" else status)


@router.get("/handoffs/{handoffId}", response_model=HandoffView, summary="Read a handoff")
def read(handoff_id: HandoffId, principal: Reader) -> HandoffView:
    return handoffs.get_handoff(principal.actor, handoff_id)


@router.get(
    "/workflows/{workflowRunId}/handoffs",
    response_model=list[HandoffView],
    summary="A run's handoffs, open and resolved",
)
def of_run(run_id: RunId, principal: Reader) -> list[HandoffView]:
    return handoffs.list_handoffs(principal.actor, status=None, run_id=run_id)


@router.post(
    "/handoffs/{handoffId}/claim",
    response_model=HandoffView,
    responses=_CONFLICT,
    summary="Claim a handoff",
    description="Holds it for `LIFECYCLE_EFFECT_CLAIM_S`; the answer's `fence` is the "
    "token a resolution names. 409 when someone else holds it or it is resolved.",
)
def claim(handoff_id: HandoffId, principal: Operator) -> HandoffView:
    return handoffs.claim_handoff(principal.actor, handoff_id)


@router.post(
    "/handoffs/{handoffId}/resolve",
    response_model=HandoffView,
    responses=_CONFLICT,
    summary="Resolve a handoff",
    description="confirm_effect, confirm_absent, retry (idempotent effects, or ones known "
    "not to have happened) or cancel, with an evidence reference or a comment. Exactly "
    "one resolution succeeds; the others get 409 naming who resolved it.",
)
def resolve(handoff_id: HandoffId, body: ResolveRequest, principal: Operator) -> HandoffView:
    return handoffs.resolve_handoff(
        principal.actor,
        handoff_id,
        body.action.value,
        evidence_ref=body.evidence_ref,
        comment=body.comment,
        fence=body.fence,
    )
