"""The lifecycle's one decision function: `decide(state, signal) -> Decision`. No I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.jobs import JobOutcome
from orchestrator.contracts.signals import (
    APPROVAL_SIGNALS,
    ArtifactKind,
    SignalEnvelope,
    SignalFate,
)
from orchestrator.contracts.signals import SignalType as S
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle.approvals import ApprovalView, approval_problem
from orchestrator.lifecycle.definition import (
    APPROVAL_WAIT_FOR,
    SCOPE_APPROVAL_DEADLINE,
    STEP_SPECS,
)
from orchestrator.lifecycle.effects import (
    Audit,
    CancelJobs,
    ConsumeApproval,
    Effect,
    StepChanged,
)
from orchestrator.lifecycle.state import RunState
from orchestrator.lifecycle.transitions import block, complete_current, enter

_E = AuditEventType
_FATE_EVENT = {
    SignalFate.APPLIED: _E.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED,
    SignalFate.IGNORED: _E.LIFECYCLE_WORKFLOW_SIGNAL_IGNORED,
    SignalFate.REJECTED: _E.LIFECYCLE_WORKFLOW_SIGNAL_REJECTED,
}


@dataclass(frozen=True)
class Decision:
    state: RunState
    effects: tuple[Effect, ...]
    fate: SignalFate
    reason: str | None = None


@dataclass(frozen=True)
class _Outcome:
    """A handler's answer before the audit of the signal itself is added."""

    state: RunState
    effects: list[Effect]
    fate: SignalFate = SignalFate.APPLIED
    reason: str | None = None


Handler = Callable[[RunState, SignalEnvelope, ApprovalView | None], _Outcome]


def decide(state: RunState, signal: SignalEnvelope,
           approval: ApprovalView | None = None) -> Decision:
    """Apply one signal to a run. Pending means: not yet, keep it in the inbox."""
    outcome = _route(state, signal, approval)
    effects = list(outcome.effects)
    event = _FATE_EVENT.get(outcome.fate)
    if event is not None:
        metadata = {"signal_type": signal.type.value, "signal_id": str(signal.signal_id),
                    "fate": outcome.fate.value}
        if outcome.reason:
            metadata["reason"] = outcome.reason
        effects.insert(0, Audit(event, state.step, signal.actor_id, metadata))
    return Decision(outcome.state, tuple(effects), outcome.fate, outcome.reason)


def _route(state: RunState, signal: SignalEnvelope, approval: ApprovalView | None) -> _Outcome:
    if (signal.run_id, signal.tenant_id, signal.organization_id, signal.assessment_id) != (
        state.run_id, state.tenant_id, state.organization_id, state.assessment_id
    ):
        return _rejected(state, "signal does not belong to this run")
    if state.status.is_terminal:
        return _ignored(state, f"run is {state.status.value}")
    handler = _CONTROL.get(signal.type)
    if handler is not None:
        return handler(state, signal, approval)
    if state.status is WorkflowStatus.PENDING:
        return _pending(state, "run has not started")
    if state.status is WorkflowStatus.BLOCKED:
        return _pending(state, "run is blocked")
    if state.status is WorkflowStatus.FAILED and not signal.type.is_job_outcome:
        return _pending(state, "run failed; it applies after the step is retried")
    if signal.type.is_job_outcome:
        return _job_outcome(state, signal)
    if signal.type.is_approval:
        return _approval(state, signal, approval)
    return _input(state, signal)


# --- outcomes -------------------------------------------------------------------------

def _ignored(state: RunState, reason: str) -> _Outcome:
    return _Outcome(state, [], SignalFate.IGNORED, reason)


def _rejected(state: RunState, reason: str) -> _Outcome:
    return _Outcome(state, [], SignalFate.REJECTED, reason)


def _pending(state: RunState, reason: str) -> _Outcome:
    return _Outcome(state, [], SignalFate.PENDING, reason)


def _position(state: RunState, step: Step) -> int:
    """Negative: the run has not reached `step`; zero: it is there; positive: past it."""
    current = state.step.order if state.step is not None else -1
    return current - step.order


# --- run control: start, cancel, block, resume -----------------------------------------

def _start(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> _Outcome:
    if state.status is not WorkflowStatus.PENDING:
        return _ignored(state, "run already started")
    effects: list[Effect] = [Audit(_E.LIFECYCLE_WORKFLOW_STARTED, None, signal.actor_id,
                                   {"trace_id": signal.trace_id})]
    problem = _assessment_problem(signal)
    if problem is None:
        return _Outcome(enter(state, Step.VALIDATE_ASSESSMENT, effects), effects)
    state = state.with_entry("attempts", Step.VALIDATE_ASSESSMENT, 1).evolve(
        step=Step.VALIDATE_ASSESSMENT)
    effects.append(StepChanged(Step.VALIDATE_ASSESSMENT, 1, StepStatus.RUNNING))
    return _Outcome(block(state, effects, problem, signal.actor_id, resume_to=None), effects)


def _assessment_problem(signal: SignalEnvelope) -> str | None:
    assessment = signal.payload.get("assessment")
    if not isinstance(assessment, dict):
        return "assessment snapshot missing from the start request"
    if assessment.get("status") == "closed":
        return "assessment is closed"
    if not str(assessment.get("name") or "").strip():
        return "assessment has no name"
    return None


def _cancel(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> _Outcome:
    reason = str(signal.payload.get("reason") or "cancelled")
    effects: list[Effect] = []
    if state.step is not None and state.status is not WorkflowStatus.FAILED:
        effects.append(StepChanged(state.step, state.attempt(state.step), StepStatus.CANCELLED))
    effects.append(CancelJobs(reason))
    effects.append(Audit(_E.LIFECYCLE_WORKFLOW_CANCELLED, state.step, signal.actor_id,
                         {"reason": reason}))
    new_state = state.evolve(status=WorkflowStatus.CANCELLED, reason=reason, active_job_id=None)
    return _Outcome(new_state, effects)


def _block(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> _Outcome:
    if state.status is WorkflowStatus.BLOCKED:
        return _ignored(state, "run is already blocked")
    if state.status is WorkflowStatus.FAILED:
        return _ignored(state, "run failed; retry or cancel it")
    reason = str(signal.payload.get("reason") or "blocked for manual intervention")
    effects: list[Effect] = []
    return _Outcome(block(state, effects, reason, signal.actor_id, resume_to=state.status),
                    effects)


def _resume(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> _Outcome:
    if state.status is not WorkflowStatus.BLOCKED:
        return _ignored(state, "run is not blocked")
    effects: list[Effect] = [Audit(_E.LIFECYCLE_WORKFLOW_RESUMED, state.step, signal.actor_id,
                                   {"blocked_reason": state.reason})]
    if state.blocked_from is not None:
        resumed = state.evolve(status=state.blocked_from, blocked_from=None, reason=None)
        return _Outcome(resumed, effects)
    assert state.step is not None
    # Blocked before the step could start (closed gate, invalid assessment): try it again.
    return _Outcome(enter(state.evolve(reason=None), state.step, effects), effects)


_CONTROL: dict[S, Handler] = {
    S.WORKFLOW_START_REQUESTED: _start,
    S.ASSESSMENT_CANCELLED: _cancel,
    S.ASSESSMENT_BLOCKED: _block,
    S.ASSESSMENT_RESUMED: _resume,
}


# --- inputs from people: documents and framework ----------------------------------------

def _input(state: RunState, signal: SignalEnvelope) -> _Outcome:
    wait = {S.DOCUMENTS_UPLOADED: Step.WAIT_FOR_DOCUMENTS,
            S.FRAMEWORK_SELECTED: Step.WAIT_FOR_FRAMEWORK_SELECTION}[signal.type]
    framework = None
    if signal.type is S.FRAMEWORK_SELECTED:
        framework = str(signal.payload.get("framework") or "").strip()
        if not framework:
            return _rejected(state, "framework_selected needs a non-empty 'framework'")
    position = _position(state, wait)
    if position < 0:
        return _pending(state, f"run has not reached {wait.value}")
    if position > 0:
        return _ignored(state, f"{wait.value} is already complete")
    if framework is not None:
        state = state.evolve(framework=framework)
    effects: list[Effect] = []
    return _Outcome(complete_current(state, effects, signal.actor_id), effects)


# --- approvals ---------------------------------------------------------------------------

def _approval(state: RunState, signal: SignalEnvelope, approval: ApprovalView | None) -> _Outcome:
    kind = APPROVAL_SIGNALS[signal.type]
    if kind is ArtifactKind.SCOPE:
        return _scope_approval(state, signal, approval)
    position = _position(state, APPROVAL_WAIT_FOR[kind])
    if position < 0:
        return _pending(state, f"run has not reached the {kind.value} approval wait")
    if position > 0:
        return _ignored(state, f"the {kind.value} gate is already open")
    problem = approval_problem(state, signal, approval)
    if problem is not None:
        return _rejected(state, problem)
    assert approval is not None
    effects = _accept(state, signal, approval)
    state = state.with_entry("approved", kind, approval.artifact_version)
    return _Outcome(complete_current(state, effects, signal.actor_id), effects)


def _scope_approval(state: RunState, signal: SignalEnvelope,
                    approval: ApprovalView | None) -> _Outcome:
    if _position(state, SCOPE_APPROVAL_DEADLINE) > 0:
        return _ignored(state, "the SoA gate is open; the scope can no longer be approved")
    if ArtifactKind.SCOPE not in state.artifacts:
        return _pending(state, "no scope draft exists yet")
    if state.is_approved(ArtifactKind.SCOPE):
        return _ignored(state, "the current scope version is already approved")
    problem = approval_problem(state, signal, approval)
    if problem is not None:
        return _rejected(state, problem)
    assert approval is not None
    effects = _accept(state, signal, approval)
    return _Outcome(state.with_entry("approved", ArtifactKind.SCOPE, approval.artifact_version),
                    effects)


def _accept(state: RunState, signal: SignalEnvelope, approval: ApprovalView) -> list[Effect]:
    return [
        ConsumeApproval(approval.approval_event_id, approval.artifact_kind,
                        approval.artifact_version),
        Audit(_E.LIFECYCLE_WORKFLOW_APPROVAL_ACCEPTED, state.step, signal.actor_id,
              {"approval_event_id": str(approval.approval_event_id),
               "artifact_kind": approval.artifact_kind.value,
               "artifact_version": approval.artifact_version,
               "approver_id": approval.approver_id}),
    ]


# --- job outcomes --------------------------------------------------------------------------

def _job_outcome(state: RunState, signal: SignalEnvelope) -> _Outcome:
    try:
        outcome = JobOutcome.model_validate(signal.payload)
    except ValidationError as error:
        return _rejected(state, f"malformed job outcome: {error.error_count()} error(s)")
    if outcome.job_id != state.active_job_id or state.status is WorkflowStatus.FAILED:
        return _ignored(state, f"job {outcome.job_id} is not the run's active job")
    assert state.step is not None
    spec = STEP_SPECS[state.step]
    if signal.type is S.JOB_FAILED or not outcome.succeeded:
        return _job_failed(state, signal, outcome)
    if signal.type is not spec.completion_signal:
        return _rejected(state, f"{state.step.value} completes with "
                         f"{spec.completion_signal}, not {signal.type.value}")
    if spec.produces is not None:
        if outcome.artifact is None or outcome.artifact.kind is not spec.produces:
            return _rejected(state, f"{state.step.value} must report a {spec.produces.value} "
                             "artifact")
        state = state.with_entry("artifacts", spec.produces, outcome.artifact.version)
    effects: list[Effect] = []
    return _Outcome(complete_current(state, effects, signal.actor_id), effects)


def _job_failed(state: RunState, signal: SignalEnvelope, outcome: JobOutcome) -> _Outcome:
    assert state.step is not None
    error = outcome.error.message if outcome.error else "job failed without an error"
    code = outcome.error.code if outcome.error else "unknown"
    attempt = state.attempt(state.step)
    effects: list[Effect] = [
        StepChanged(state.step, attempt, StepStatus.FAILED, error=f"{code}: {error}"),
        Audit(_E.LIFECYCLE_WORKFLOW_STEP_FAILED, state.step, signal.actor_id,
              {"job_id": outcome.job_id, "error_code": code}),
        Audit(_E.LIFECYCLE_WORKFLOW_FAILED, state.step, signal.actor_id, {"error_code": code}),
    ]
    failed = state.evolve(status=WorkflowStatus.FAILED, reason=f"{code}: {error}",
                          active_job_id=None)
    return _Outcome(failed, effects)
