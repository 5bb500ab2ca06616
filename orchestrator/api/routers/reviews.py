"""Review work over HTTP: a gate's review claimed, renewed, released or taken over, and
the comments on a draft and its rows (docs/http-api.md, "Claims and comments")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Query, Response
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from orchestrator.api.auth import Approver, Reader
from orchestrator.api.paths import RunId
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.errors import NotFound
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.text import Text
from orchestrator.service import review_claims, review_comments
from orchestrator.service.review_comments import COMMENT_LIMIT

router = APIRouter(
    prefix="/api/v1/workflows",
    tags=["reviews"],
    responses=problem_responses(400, 401, 403, 404, 422),
)
Kind = Annotated[ArtifactKind, Path(alias="artifactKind")]
_CONFLICT = problem_responses(409)


class _FromView(BaseModel):
    """Read from the service's view: its `kind` is the answer's `artifact_kind`."""

    model_config = ConfigDict(from_attributes=True)

    artifact_kind: ArtifactKind = Field(validation_alias=AliasChoices("artifact_kind", "kind"))
    version: int


class ClaimOut(_FromView):
    claimed_by: str
    claimed_at: datetime
    expires_at: datetime


class CommentOut(_FromView):
    id: int
    row: str | None
    author: str
    body: str
    created_at: datetime


class CommentRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = Field(
        ge=1, le=1_000_000, description="The version of the draft the comment is on."
    )
    body: Annotated[Text, Field(min_length=1, max_length=COMMENT_LIMIT)]
    row: Annotated[Text, Field(max_length=200)] | None = Field(
        None, description="A row of the draft (its id); none: the draft as a whole."
    )


@router.get(
    "/{workflowRunId}/reviews/{artifactKind}/claim",
    response_model=ClaimOut | None,
    summary="Who holds the review of a gate",
    description="null when no claim holds now.",
)
def read_claim(run_id: RunId, kind: Kind, principal: Reader) -> ClaimOut | None:
    held = review_claims.claim_of_run(principal.actor, run_id, kind)
    return ClaimOut.model_validate(held) if held is not None else None


@router.post(
    "/{workflowRunId}/reviews/{artifactKind}/claim",
    response_model=ClaimOut,
    responses=_CONFLICT,
    summary="Claim (or renew) the review of the gate the run waits at",
    description="While it holds (`LIFECYCLE_CONSOLE_CLAIM_TTL_S` from the claim or its "
    "renewal) only its holder may record an approval, a rejection or an amendment of "
    "that draft. 409 `review_claimed` while another person holds it, `gate_not_waiting` "
    "while the run does not wait at that gate.",
)
def claim(run_id: RunId, kind: Kind, principal: Approver) -> ClaimOut:
    return ClaimOut.model_validate(review_claims.claim_review(principal.actor, run_id, kind))


@router.post(
    "/{workflowRunId}/reviews/{artifactKind}/claim/take-over",
    response_model=ClaimOut,
    responses=_CONFLICT,
    summary="Take over a review another person holds",
    description="Explicit: recorded in the run's audit trail "
    "(`lifecycle_workflow_review_claim_taken_over`) and told to the tenant's webhooks "
    "(`review.claim_taken_over`, `data.holder` held it).",
)
def take_over(run_id: RunId, kind: Kind, principal: Approver) -> ClaimOut:
    return ClaimOut.model_validate(review_claims.take_over_review(principal.actor, run_id, kind))


@router.delete(
    "/{workflowRunId}/reviews/{artifactKind}/claim",
    status_code=204,
    summary="Release your claim",
    description="404 when you hold none.",
)
def release(run_id: RunId, kind: Kind, principal: Approver) -> Response:
    if not review_claims.release_review(principal.actor, run_id, kind):
        raise NotFound(f"you hold no claim on the {kind.value} review of run {run_id}")
    return Response(status_code=204)


@router.get(
    "/{workflowRunId}/reviews/{artifactKind}/comments",
    response_model=list[CommentOut],
    summary="Comments on a run's draft, every version, oldest first",
)
def comments(
    run_id: RunId,
    kind: Kind,
    principal: Reader,
    version: Annotated[int | None, Query(ge=1)] = None,
) -> list[CommentOut]:
    found = review_comments.list_comments(principal.actor, run_id, kind)
    return [CommentOut.model_validate(c) for c in found if version is None or c.version == version]


@router.post(
    "/{workflowRunId}/reviews/{artifactKind}/comments",
    response_model=CommentOut,
    status_code=201,
    summary="Comment on a draft or one of its rows",
)
def comment(run_id: RunId, kind: Kind, body: CommentRequest, principal: Approver) -> CommentOut:
    made = review_comments.add_comment(
        principal.actor, run_id, kind, body.version, body.body, row=body.row
    )
    return CommentOut.model_validate(made)
