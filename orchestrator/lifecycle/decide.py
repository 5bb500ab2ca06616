"""The lifecycle's one decision function: `decide(state, signal) -> Decision`. No I/O."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.jobs import JobOutcome
from orchestrator.contracts.signals import SignalEnvelope, SignalFate
from orchestrator.contracts.signals import SignalType as S
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle import (
    amending,
    approval_signals,
    definition_pins,
    definitions,
    handoffs,
    operator_commands,
)
from orchestrator.lifecycle.approval_checks import ApprovalView
from orchestrator.lifecycle.approval_signals import position
from orchestrator.lifecycle.effects import Audit, CancelJobs, Effect, StepChanged
from orchestrator.lifecycle.outcome import Outcome, ignored, pending, rejected
from orchestrator.lifecycle.outside import outside_effects
from orchestrator.lifecycle.policies import parse_policies
from orchestrator.lifecycle.selection import selected_categories, selected_frameworks
from orchestrator.lifecycle.state import RunState
from orchestrator.lifecycle.transitions import block, complete_current, enter

_E = AuditEventType
_FATE_EVENT = {
    SignalFate.APPLIED: _E.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED,
    SignalFate.IGNORED: _E.LIFECYCLE_WORKFLOW_SIGNAL_IGNORED,
    SignalFate.REJECTED: _E.LIFECYCLE_WORKFLOW_SIGNAL_REJECTED,
}
BLOCK_KINDS = ("information", "approval", "configuration", "manual_intervention")
#: Job failures a person fixes by giving more input: (step, error code) -> wait to return to.
NEEDS_INPUT = {
    (Step.INGEST_DOCUMENTS, "no_extractable_text"): Step.WAIT_FOR_DOCUMENTS,
    (Step.INGEST_DOCUMENTS, "no_documents"): Step.WAIT_FOR_DOCUMENTS,
}


@dataclass(frozen=True)
class Decision:
    state: RunState
    effects: tuple[Effect, ...]
    fate: SignalFate
    reason: str | None = None


Handler = Callable[[RunState, SignalEnvelope, ApprovalView | None], Outcome]


def decide(
    state: RunState, signal: SignalEnvelope, approval: ApprovalView | None = None
) -> Decision:
    """Apply one signal to a run. Pending means: not yet, keep it in the inbox."""
    outcome = _route(state, signal, approval)
    effects = list(outcome.effects)
    if outcome.fate is SignalFate.APPLIED:
        effects += outside_effects(state, outcome.state, outcome.effects)
    event = _FATE_EVENT.get(outcome.fate)
    if event is not None:
        metadata = {
            "signal_type": signal.type.value,
            "signal_id": str(signal.signal_id),
            "fate": outcome.fate.value,
        }
        if outcome.reason:
            metadata["reason"] = outcome.reason
        effects.insert(0, Audit(event, state.step, signal.actor_id, metadata))
    return Decision(outcome.state, tuple(effects), outcome.fate, outcome.reason)


def _route(state: RunState, signal: SignalEnvelope, approval: ApprovalView | None) -> Outcome:
    before_rules = _before_rules(state, signal)
    if before_rules is not None:
        return before_rules
    handler = _ANY_TIME.get(signal.type)
    if handler is not None:
        return handler(state, signal, approval)
    if state.status is WorkflowStatus.PENDING:
        return pending(state, "run has not started")
    if state.status is WorkflowStatus.BLOCKED:
        return pending(state, "run is blocked")
    if state.status is WorkflowStatus.FAILED and not signal.type.is_job_outcome:
        return pending(state, "run failed; it applies after the step is retried")
    if signal.type.is_job_outcome:
        return _job_outcome(state, signal)
    if signal.type.is_approval:
        return approval_signals.approve(state, signal, approval)
    if signal.type is S.APPROVAL_REJECTED:
        return approval_signals.reject(state, signal, approval)
    return _input(state, signal)


def _before_rules(state: RunState, signal: SignalEnvelope) -> Outcome | None:
    """Another run's signal, a run that is over, a run whose definition is not here."""
    if (signal.run_id, signal.tenant_id, signal.organization_id, signal.assessment_id) != (
        state.run_id,
        state.tenant_id,
        state.organization_id,
        state.assessment_id,
    ):
        return rejected(state, "signal does not belong to this run")
    if state.status.is_terminal:
        return ignored(state, f"run is {state.status.value}")
    return definition_pins.unavailable_outcome(state, signal)


# --- run control: start, cancel, block, resume -----------------------------------------


def _start(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> Outcome:
    if state.status is WorkflowStatus.BLOCKED and state.blocked_from is WorkflowStatus.PENDING:
        return pending(state, "run is blocked")
    if state.status is not WorkflowStatus.PENDING:
        return ignored(state, "run already started")
    pinned = definition_pins.pin_at_start(state, signal.payload)
    if isinstance(pinned, str):
        return rejected(state, pinned)
    problem = definitions.unavailable(pinned)
    if problem is not None and definitions.not_yet_shipped(pinned):
        return pending(state, f"{problem}: waiting for a worker that ships it")
    if problem is not None:
        return rejected(state, problem)
    try:
        requested = parse_policies(signal.payload.get("approval_policies"))
    except ValueError as error:
        return rejected(state, f"invalid approval policies: {error}")
    defaults = definitions.of(pinned).default_policies
    state = pinned.evolve(policies=MappingProxyType({**defaults, **requested}))
    pins = signal.payload.get("catalogs") or {}
    if not isinstance(pins, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in pins.items()
    ):
        return rejected(state, "catalogs must map catalogue names to version ids")
    state = state.evolve(catalogs=MappingProxyType(dict(pins)))
    started = {
        "trace_id": signal.trace_id,
        "origin": signal.payload.get("origin"),
        "definition": definitions.of(state).label,
    }
    effects: list[Effect] = [Audit(_E.LIFECYCLE_WORKFLOW_STARTED, None, signal.actor_id, started)]
    problem = _assessment_problem(signal)
    if problem is None:
        return Outcome(enter(state, Step.VALIDATE_ASSESSMENT, effects), effects)
    step = Step.VALIDATE_ASSESSMENT
    state = state.with_entry("attempts", step, 1).evolve(step=step)
    # The attempt ends failed; resuming re-enters the step as a new attempt.
    effects += [
        StepChanged(step, 1, StepStatus.RUNNING),
        Audit(_E.LIFECYCLE_WORKFLOW_STEP_STARTED, step, signal.actor_id, {"attempt": 1}),
        StepChanged(step, 1, StepStatus.FAILED, error=problem),
    ]
    state = block(state, effects, problem, signal.actor_id, resume_to=None)
    return Outcome(state.evolve(block_kind="information"), effects)


def _assessment_problem(signal: SignalEnvelope) -> str | None:
    assessment = signal.payload.get("assessment")
    if not isinstance(assessment, dict):
        return "assessment snapshot missing from the start request"
    if assessment.get("status") == "closed":
        return "assessment is closed"
    if not str(assessment.get("name") or "").strip():
        return "assessment has no name"
    return None


def _cancel(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> Outcome:
    reason = str(signal.payload.get("reason") or "").strip()
    if not reason:
        return rejected(state, "cancelling needs a reason")
    effects: list[Effect] = []
    if state.step is not None and _has_open_execution(state):
        effects.append(StepChanged(state.step, state.attempt(state.step), StepStatus.CANCELLED))
    effects.append(CancelJobs(reason))
    effects.append(
        Audit(_E.LIFECYCLE_WORKFLOW_CANCELLED, state.step, signal.actor_id, {"reason": reason})
    )
    new_state = state.evolve(status=WorkflowStatus.CANCELLED, reason=reason, active_job_id=None)
    return Outcome(new_state, effects)


def _has_open_execution(state: RunState) -> bool:
    """Failed runs and runs blocked before entering their step have nothing running."""
    if state.status is WorkflowStatus.FAILED:
        return False
    return not (state.status is WorkflowStatus.BLOCKED and state.blocked_from is None)


def _block(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> Outcome:
    kind = str(signal.payload.get("kind") or "manual_intervention")
    if kind not in BLOCK_KINDS:
        return rejected(state, f"block kind must be one of {', '.join(BLOCK_KINDS)}")
    if state.status is WorkflowStatus.BLOCKED:
        return ignored(state, "run is already blocked")
    if state.status is WorkflowStatus.FAILED:
        return ignored(state, "run failed; retry or cancel it")
    reason = str(signal.payload.get("reason") or "").strip() or f"blocked: {kind}"
    effects: list[Effect] = []
    blocked = block(state, effects, reason, signal.actor_id, resume_to=state.status)
    return Outcome(blocked.evolve(block_kind=kind), effects)


def _resume(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> Outcome:
    if state.status is not WorkflowStatus.BLOCKED:
        return ignored(state, "run is not blocked")
    at_handoff = handoffs.resume_problem(state)
    if at_handoff is not None:
        return rejected(state, at_handoff)
    effects: list[Effect] = [
        Audit(
            _E.LIFECYCLE_WORKFLOW_RESUMED,
            state.step,
            signal.actor_id,
            {"blocked_reason": state.reason, "block_kind": state.block_kind},
        )
    ]
    if state.blocked_from is not None:
        resumed = state.evolve(
            status=state.blocked_from, blocked_from=None, reason=None, block_kind=None
        )
        return Outcome(resumed, effects)
    step = state.step
    assert step is not None
    # Blocked before the step could start (closed gate, invalid assessment): try it again.
    state = state.evolve(reason=None, block_kind=None)
    return Outcome(enter(state, step, effects, requested_by=signal.actor_id), effects)


_ANY_TIME: dict[S, Handler] = {
    S.WORKFLOW_START_REQUESTED: _start,
    S.ASSESSMENT_CANCELLED: _cancel,
    S.ASSESSMENT_BLOCKED: _block,
    S.ASSESSMENT_RESUMED: _resume,
    S.STEP_RETRY_REQUESTED: operator_commands.retry,
    S.STEP_REPROCESS_REQUESTED: operator_commands.reprocess,
    S.ARTIFACT_REVISION_REQUESTED: operator_commands.revise,
    S.ARTIFACT_AMENDED: amending.amend,
    S.EXTERNAL_EFFECT_STUCK: handoffs.stuck,
    S.HANDOFF_RESOLVED: handoffs.resolved,
    S.DEFINITION_MIGRATION_REQUESTED: definition_pins.migrate,
}


# --- inputs from people: documents and framework ----------------------------------------


def _input(state: RunState, signal: SignalEnvelope) -> Outcome:
    wait = {
        S.DOCUMENTS_UPLOADED: Step.WAIT_FOR_DOCUMENTS,
        S.FRAMEWORK_SELECTED: Step.WAIT_FOR_FRAMEWORK_SELECTION,
    }[signal.type]
    if signal.type is S.FRAMEWORK_SELECTED:
        problem = _selection_problem(signal.payload)
        if problem is not None:
            return rejected(state, problem)
    where = position(state, wait)
    if where < 0:
        return pending(state, f"run has not reached {wait.value}")
    if signal.type is S.DOCUMENTS_UPLOADED and state.step is Step.INGEST_DOCUMENTS:
        # The running attempt may have read the documents before this one landed: note it,
        # and the attempt's outcome leads to another attempt (every upload is considered).
        return Outcome(state.evolve(uploads_during_ingestion=True), [])
    if where > 0:
        return ignored(state, f"{wait.value} is already complete")
    if signal.type is S.FRAMEWORK_SELECTED:
        frameworks = selected_frameworks(signal.payload)
        state = state.evolve(
            framework="; ".join(frameworks),
            frameworks=frameworks,
            categories=MappingProxyType(selected_categories(signal.payload) or {}),
        )
    effects: list[Effect] = []
    return Outcome(complete_current(state, effects, signal.actor_id), effects)


def _selection_problem(payload: Mapping[str, Any]) -> str | None:
    if not selected_frameworks(payload):
        return "framework_selected needs a non-empty 'framework' or 'frameworks' list"
    if selected_categories(payload) is None:
        return (
            "categories must be a list of category names, or an object mapping a framework "
            "name to a list of category names"
        )
    return None


# --- job outcomes --------------------------------------------------------------------------


def _job_outcome(state: RunState, signal: SignalEnvelope) -> Outcome:
    try:
        outcome = JobOutcome.model_validate(signal.payload)
    except ValidationError as error:
        return rejected(state, f"malformed job outcome: {error.error_count()} error(s)")
    if outcome.job_id != state.active_job_id or state.status is WorkflowStatus.FAILED:
        return ignored(state, f"job {outcome.job_id} is not the run's active job")
    assert state.step is not None
    spec = definitions.of(state).spec(state.step)
    if signal.type is S.JOB_FAILED or not outcome.succeeded:
        return _job_failed(state, signal, outcome)
    if signal.type is not spec.completion_signal:
        return rejected(
            state,
            f"{state.step.value} completes with {spec.completion_signal}, not {signal.type.value}",
        )
    if state.uploads_during_ingestion and state.step is Step.INGEST_DOCUMENTS:
        return _ingest_again(
            state,
            signal,
            [
                StepChanged(state.step, state.attempt(state.step), StepStatus.COMPLETED),
                Audit(_E.LIFECYCLE_WORKFLOW_STEP_COMPLETED, state.step, signal.actor_id),
            ],
        )
    if spec.produces is not None:
        artifact = outcome.artifact
        if artifact is None or artifact.kind is not spec.produces:
            return rejected(
                state, f"{state.step.value} must report a {spec.produces.value} artifact"
            )
        kind = spec.produces
        state = (
            state.drafted(kind, outcome.actor_id)
            .with_entry("artifacts", kind, artifact.version)
            .without_entry("collected", kind)
            .without_entry("rejected", kind)
        )
    effects: list[Effect] = []
    return Outcome(complete_current(state, effects, signal.actor_id), effects)


def _job_failed(state: RunState, signal: SignalEnvelope, outcome: JobOutcome) -> Outcome:
    assert state.step is not None
    error = outcome.error.message if outcome.error else "job failed without an error"
    code = outcome.error.code if outcome.error else "unknown"
    attempt = state.attempt(state.step)
    effects: list[Effect] = [
        StepChanged(state.step, attempt, StepStatus.FAILED, error=f"{code}: {error}"),
        Audit(
            _E.LIFECYCLE_WORKFLOW_STEP_FAILED,
            state.step,
            signal.actor_id,
            {"job_id": outcome.job_id, "error_code": code},
        ),
    ]
    back_to = NEEDS_INPUT.get((state.step, code))
    if back_to is not None and state.uploads_during_ingestion:
        # Uploads that came during the attempt are the input it was missing: read them.
        return _ingest_again(state, signal, effects)
    if back_to is not None:
        # Retrying cannot help; another document can: wait for it.
        state = enter(state.evolve(active_job_id=None), back_to, effects)
        return Outcome(state.evolve(reason=f"{code}: {error}"), effects)
    effects.append(
        Audit(_E.LIFECYCLE_WORKFLOW_FAILED, state.step, signal.actor_id, {"error_code": code})
    )
    failed = state.evolve(
        status=WorkflowStatus.FAILED, reason=f"{code}: {error}", active_job_id=None
    )
    return Outcome(failed, effects)


def _ingest_again(state: RunState, signal: SignalEnvelope, effects: list[Effect]) -> Outcome:
    """The ingestion attempt ended (its outcome already in `effects`) while documents were
    uploaded during it: a new attempt reads them before the run moves on or waits."""
    effects.append(
        Audit(
            _E.LIFECYCLE_WORKFLOW_STEP_RETRIED,
            Step.INGEST_DOCUMENTS,
            signal.actor_id,
            {"reason": "documents were uploaded during ingestion"},
        )
    )
    state = enter(state.evolve(active_job_id=None, reason=None), Step.INGEST_DOCUMENTS, effects)
    return Outcome(state, effects)
