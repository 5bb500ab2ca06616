"""Approval events: a reviewer's recorded decision on one exact artifact version.

The approver is the API key's principal. The approval signal then names the event.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from orchestrator.api.auth import Approver, Reader
from orchestrator.api.dependencies import IdempotencyHeader
from orchestrator.api.idempotency import StoredResponse, run_post_once
from orchestrator.api.paths import RunId
from orchestrator.api.problems import problem_responses
from orchestrator.api.schemas import ApprovalRequest
from orchestrator.service.approval_events import ApprovalEventView, record_approval
from orchestrator.service.queries import list_approvals
from orchestrator.service.read_models import ApprovalRecordView
from orchestrator.service.seal_verification import RunVerification, verify_run

router = APIRouter(
    prefix="/api/v1/workflows",
    tags=["approvals"],
    responses=problem_responses(400, 401, 403, 404, 422),
)


@router.post(
    "/{workflowRunId}/approvals",
    status_code=201,
    response_model=ApprovalEventView,
    responses=problem_responses(409, 413),
    summary="Record an approval event",
    description="Approve, reject or request changes on one artifact version. "
    "Approving does not move the run: send the approval signal naming "
    "the event's id. A rejection reaches the run at once.",
)
def record(
    run_id: RunId,
    body: ApprovalRequest,
    request: Request,
    principal: Approver,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    def action() -> StoredResponse:
        event = record_approval(
            principal.actor,
            run_id,
            body.artifact_kind.value,
            body.artifact_version,
            decision=body.decision.value,
            approver_role=body.approver_role,
            comment=body.comment,
        )
        return StoredResponse(201, event.model_dump(mode="json"), {})

    return run_post_once(principal, request, body, idempotency_key, action)


@router.get(
    "/{workflowRunId}/approvals",
    response_model=list[ApprovalRecordView],
    summary="A run's approval events",
)
def index(run_id: RunId, principal: Reader) -> list[ApprovalRecordView]:
    return list_approvals(principal.actor, run_id)


@router.get(
    "/{workflowRunId}/verification",
    response_model=RunVerification,
    summary="Verify the run's approvals against what they approved",
    description="Recomputes each approval's seal: the digest of the artifact content it "
    "approved and of every document version that content cites. `changes` names anything "
    "edited, replaced or superseded since; `verified` is false when any is named.",
)
def verification(run_id: RunId, principal: Reader) -> RunVerification:
    return verify_run(principal.actor, run_id)
