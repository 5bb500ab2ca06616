"""The spec's endpoints: start and read a lifecycle, read, cancel, resume and signal a run."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from orchestrator.api.auth import Caller, Reader, Signaller, check_scope
from orchestrator.api.dependencies import IdempotencyHeader, Wait, await_fate_capped, signal_key
from orchestrator.api.paths import AssessmentId, RunId, run_location
from orchestrator.api.problems import problem_responses
from orchestrator.api.run_controls import control_route
from orchestrator.api.schemas import SignalRequest, StartLifecycle
from orchestrator.contracts.signals import SignalType
from orchestrator.service import operations
from orchestrator.service.apikeys import Scope
from orchestrator.service.authority import RunAuthority
from orchestrator.service.producer import get_lifecycle, get_run, send_signal, start_lifecycle
from orchestrator.service.read_models import RunView, SignalReceipt

router = APIRouter(
    prefix="/api/v1", tags=["lifecycle"], responses=problem_responses(400, 401, 403, 404, 422)
)

_WRITE_PROBLEMS = problem_responses(409, 413)
_ACCEPTED = (
    "Accepted: the signal is durable in the inbox. `fate` says what became of it "
    "so far; ask `wait` to let the coordinator decide first."
)


@router.post(
    "/assessments/{assessmentId}/workflows/lifecycle/start",
    status_code=201,
    response_model=RunView,
    responses=_WRITE_PROBLEMS,
    summary="Start the assessment's lifecycle run",
    description="Idempotent by key: the same key and input give the same run; the "
    "same key with other input, or a second active run, is a 409.",
)
def start(
    assessment_id: AssessmentId,
    principal: Signaller,
    body: StartLifecycle | None = None,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    body = body or StartLifecycle()
    key = signal_key(idempotency_key, body.idempotency_key)
    policies = (
        None
        if body.approval_policies is None
        else {
            kind.value: policy.model_dump(exclude_none=True)
            for kind, policy in body.approval_policies.items()
        }
    )
    run = start_lifecycle(
        principal.actor,
        assessment_id,
        key,
        policies=policies,
        trace_id=body.trace_id,
        origin=body.origin,
        origin_ref=body.origin_ref,
        authority=RunAuthority.of_principal(principal),
    )
    return JSONResponse(
        run.model_dump(mode="json"), status_code=201, headers={"Location": run_location(run.id)}
    )


@router.get(
    "/assessments/{assessmentId}/workflows/lifecycle",
    response_model=RunView,
    summary="The assessment's most recent lifecycle run",
)
def lifecycle(assessment_id: AssessmentId, principal: Reader) -> RunView:
    return get_lifecycle(principal.actor, assessment_id)


@router.get("/workflows/{workflowRunId}", response_model=RunView, summary="Read a run")
def read(run_id: RunId, principal: Reader) -> RunView:
    return get_run(principal.actor, run_id)


control_route(
    router,
    "/workflows/{workflowRunId}/cancel",
    operations.cancel_run,
    name="cancel",
    summary="Cancel a run",
    description=_ACCEPTED,
    responses=_WRITE_PROBLEMS,
)
control_route(
    router,
    "/workflows/{workflowRunId}/resume",
    operations.resume_run,
    name="resume",
    summary="Resume a blocked run",
    description=_ACCEPTED,
    responses=_WRITE_PROBLEMS,
)


#: Which scope each kind of signal needs (others: `signal`).
_OPERATOR_CONTROLS = {
    SignalType.ASSESSMENT_CANCELLED,
    SignalType.ASSESSMENT_BLOCKED,
    SignalType.ASSESSMENT_RESUMED,
}


def _scope_for(kind: SignalType) -> Scope:
    if kind.is_approval:
        return Scope.APPROVE
    return Scope.OPERATE if kind in _OPERATOR_CONTROLS else Scope.SIGNAL


@router.post(
    "/workflows/{workflowRunId}/signals",
    status_code=202,
    response_model=SignalReceipt,
    responses=_WRITE_PROBLEMS,
    summary="Send a signal to a run",
    description=_ACCEPTED + " Approval signals need the approve scope; cancel, "
    "block and resume need operate; others need signal.",
)
def signal(
    run_id: RunId,
    body: SignalRequest,
    principal: Caller,
    wait: Wait = 0,
    idempotency_key: IdempotencyHeader = None,
) -> SignalReceipt:
    kind = SignalType(body.type.value)
    check_scope(principal, _scope_for(kind))
    key = signal_key(idempotency_key, body.idempotency_key)
    receipt = send_signal(
        principal.actor,
        run_id,
        kind,
        key,
        payload=body.payload,
        approval_event_id=body.approval_event_id,
        trace_id=body.trace_id,
    )
    return await_fate_capped(principal.actor, receipt, wait)
