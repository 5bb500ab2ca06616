"""Operator commands: retry a failed step, reprocess a step, draft a new artifact version."""

from __future__ import annotations

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.signals import ArtifactKind, SignalEnvelope
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle.approval_checks import ApprovalView
from orchestrator.lifecycle.definition import PRODUCER_OF
from orchestrator.lifecycle.effects import (
    ArtifactStatusChanged,
    Audit,
    CancelJobs,
    Effect,
    StepChanged,
    StepsSuperseded,
)
from orchestrator.lifecycle.outcome import Outcome, ignored, rejected
from orchestrator.lifecycle.rewind import forget_downstream, rewind_plan, rewind_problem
from orchestrator.lifecycle.state import RunState
from orchestrator.lifecycle.transitions import enter

_E = AuditEventType


def _reason(signal: SignalEnvelope) -> str | None:
    reason = str(signal.payload.get("reason") or "").strip()
    return reason or None


def retry(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> Outcome:
    """Re-run the failed step as a new attempt (a new job id; idempotent services)."""
    reason = _reason(signal)
    if reason is None:
        return rejected(state, "a retry needs a reason")
    if state.status is not WorkflowStatus.FAILED:
        return ignored(state, f"only a failed run can be retried; the run is {state.status}")
    step = state.step
    assert step is not None
    effects: list[Effect] = [
        Audit(
            _E.LIFECYCLE_WORKFLOW_STEP_RETRIED,
            step,
            signal.actor_id,
            {"reason": reason, "failed_error": state.reason},
        )
    ]
    state = state.evolve(reason=None)
    return Outcome(enter(state, step, effects, requested_by=signal.actor_id), effects)


def reprocess(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> Outcome:
    reason = _reason(signal)
    if reason is None:
        return rejected(state, "reprocessing needs a reason")
    try:
        target = Step(str(signal.payload.get("step")))
    except ValueError:
        return rejected(state, f"unknown step {signal.payload.get('step')!r}")
    return _rewind(state, signal, target, bool(signal.payload.get("new_version")), reason)


def revise(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> Outcome:
    """Draft a new version of an artifact (after a rejection, or to replace a draft)."""
    reason = _reason(signal)
    if reason is None:
        return rejected(state, "a new version needs a reason")
    try:
        kind = ArtifactKind(str(signal.payload.get("artifact_kind")))
    except ValueError:
        return rejected(state, f"unknown artifact kind {signal.payload.get('artifact_kind')!r}")
    if kind not in PRODUCER_OF:
        return rejected(state, f"{kind.value} has no drafting step")
    return _rewind(
        state,
        signal,
        PRODUCER_OF[kind],
        True,
        reason,
        requested_by=_drafted_for(state, kind, signal.actor_id),
    )


def _drafted_for(state: RunState, kind: ArtifactKind, actor: str) -> str:
    """On whose behalf the next version is drafted (separation of duties). Asking for the
    revision of a draft a reviewer sent back is part of reviewing it, not authoring: the
    next version stays with whoever asked for the draft, and the reviewer may judge it."""
    current = state.artifacts.get(kind)
    if current is not None and state.rejected.get(kind) == current:
        return state.drafted_by.get(kind, actor)
    return actor


def _rewind(
    state: RunState,
    signal: SignalEnvelope,
    target: Step,
    new_version: bool,
    reason: str,
    requested_by: str | None = None,
) -> Outcome:
    if state.status is WorkflowStatus.BLOCKED:
        return rejected(state, "the run is blocked; resume it before reprocessing")
    if state.status is WorkflowStatus.PENDING:
        return rejected(state, "the run has not started")
    problem = rewind_problem(state, target, new_version)
    if problem is not None:
        return rejected(state, problem)
    plan = rewind_plan(state, target)
    effects: list[Effect] = []
    if state.step is not None and state.status is not WorkflowStatus.FAILED:
        effects.append(StepChanged(state.step, state.attempt(state.step), StepStatus.SUPERSEDED))
    effects.append(CancelJobs(f"superseded by reprocessing {target.value}"))
    effects.append(StepsSuperseded(plan.superseded_steps))
    effects.extend(
        ArtifactStatusChanged(kind, version, "superseded")
        for kind, version in plan.superseded_artifacts
    )
    effects.append(
        Audit(
            _E.LIFECYCLE_WORKFLOW_STEP_REPROCESSED,
            target,
            signal.actor_id,
            {"reason": reason, "new_version": new_version, **plan.to_json()},
        )
    )
    state = forget_downstream(state, plan)
    return Outcome(
        enter(state, target, effects, requested_by=requested_by or signal.actor_id), effects
    )
