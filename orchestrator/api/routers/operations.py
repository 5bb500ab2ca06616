"""Operator commands, the same as the celery CLI's: retry, reprocess, new version, block."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from orchestrator.api.auth import Caller, Operator, check_scope
from orchestrator.api.dependencies import IdempotencyHeader, Wait, await_fate_capped, signal_key
from orchestrator.api.paths import RunId, StepName
from orchestrator.api.problems import ApiProblem, problem_responses
from orchestrator.api.run_controls import control_route
from orchestrator.api.schemas import (
    NewVersionRequest,
    ReprocessPlan,
    ReprocessRequest,
)
from orchestrator.service import operations
from orchestrator.service.apikeys import Scope
from orchestrator.service.read_models import SignalReceipt
from orchestrator.service.revision_rights import sent_back_by

router = APIRouter(
    prefix="/api/v1/workflows",
    tags=["operations"],
    responses=problem_responses(400, 401, 403, 404, 409, 413, 422),
)

_ACCEPTED = "Accepted: the command is durable in the run's inbox."


control_route(
    router,
    "/{workflowRunId}/retry",
    operations.retry_step,
    name="retry",
    summary="Retry the failed step",
    description=_ACCEPTED,
)


_PLAN: dict[int | str, dict[str, Any]] = {
    200: {"model": ReprocessPlan, "description": "Dry run: what reprocessing would supersede."}
}


@router.post(
    "/{workflowRunId}/steps/{step}/reprocess",
    status_code=202,
    response_model=SignalReceipt,
    responses=_PLAN,
    summary="Reprocess a step",
    description="Rewinds the run to the step: downstream work is superseded and "
    "its approvals are collected again. " + _ACCEPTED,
)
def reprocess(
    run_id: RunId,
    step: StepName,
    body: ReprocessRequest,
    principal: Operator,
    wait: Wait = 0,
    idempotency_key: IdempotencyHeader = None,
) -> Any:
    key = signal_key(idempotency_key, body.idempotency_key)
    result = operations.reprocess_step(
        principal.actor,
        run_id,
        step.value,
        reason=body.reason,
        idempotency_key=key,
        new_version=body.new_version,
        dry_run=body.dry_run,
    )
    if isinstance(result, SignalReceipt):
        return await_fate_capped(principal.actor, result, wait)
    return JSONResponse(
        ReprocessPlan.model_validate(result.to_json()).model_dump(mode="json"), status_code=200
    )


@router.post(
    "/{workflowRunId}/new-version",
    status_code=202,
    response_model=SignalReceipt,
    summary="Draft a new version of an artifact",
    description="Needs the operate scope, or the approve scope as the reviewer who "
    "rejected the current draft or asked for changes. " + _ACCEPTED,
)
def new_version(
    run_id: RunId,
    body: NewVersionRequest,
    principal: Caller,
    wait: Wait = 0,
    idempotency_key: IdempotencyHeader = None,
) -> SignalReceipt:
    if not principal.allows(Scope.OPERATE):
        check_scope(principal, Scope.OPERATE, Scope.APPROVE)
        if not sent_back_by(principal.actor, run_id, body.artifact_kind):
            raise ApiProblem(
                403,
                "insufficient_scope",
                "this needs the operate scope; with the approve scope, only the "
                f"reviewer who sent the current {body.artifact_kind.value} draft "
                "back may ask for its next version",
                required_scopes=[Scope.OPERATE.value],
            )
    key = signal_key(idempotency_key, body.idempotency_key)
    receipt = operations.request_new_version(
        principal.actor, run_id, body.artifact_kind.value, reason=body.reason, idempotency_key=key
    )
    return await_fate_capped(principal.actor, receipt, wait)


control_route(
    router,
    "/{workflowRunId}/block",
    operations.block_run,
    name="block",
    summary="Block a run for manual intervention",
    description=_ACCEPTED,
)
