"""Moving a run through its steps: entering a step, completing it, stopping at waits."""

from __future__ import annotations

from orchestrator.contracts.audit import SYSTEM_ACTOR, AuditEventType
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepKind, StepStatus
from orchestrator.lifecycle import definitions
from orchestrator.lifecycle.definition import APPROVED_AT, MAX_TRANSITIONS_PER_DECISION
from orchestrator.lifecycle.effects import Audit, CloseAssessment, Effect, EnqueueJob, StepChanged
from orchestrator.lifecycle.state import RunState

_E = AuditEventType


def job_id_for(state: RunState, step: Step, attempt: int) -> str:
    """Deterministic: a re-delivered or re-published job keeps its id."""
    return f"{state.run_id}:{step.value}:{attempt}"


def block(
    state: RunState,
    effects: list[Effect],
    reason: str,
    actor: str,
    resume_to: WorkflowStatus | None,
) -> RunState:
    """Block the run; `resume_to` None means resuming re-enters the current step."""
    effects.append(Audit(_E.LIFECYCLE_WORKFLOW_BLOCKED, state.step, actor, {"reason": reason}))
    return state.evolve(status=WorkflowStatus.BLOCKED, blocked_from=resume_to, reason=reason)


def complete_current(state: RunState, effects: list[Effect], actor: str) -> RunState:
    """Complete the current step and enter the ones after it until one must wait."""
    step = state.step
    assert step is not None, "a run without a current step has nothing to complete"
    effects.append(StepChanged(step, state.attempt(step), StepStatus.COMPLETED))
    effects.append(Audit(_E.LIFECYCLE_WORKFLOW_STEP_COMPLETED, step, actor))
    following = definitions.of(state).next(step)
    assert following is not None, "the last step completes the run inline"
    return enter(state.evolve(active_job_id=None), following, effects)


def enter(
    state: RunState, step: Step, effects: list[Effect], requested_by: str = SYSTEM_ACTOR
) -> RunState:
    """Enter `step` and run inline steps until a job is queued, a wait opens or the run ends.

    `requested_by` is the person whose command re-entered the step (retry, reprocess, new
    version): a job queued for it drafts on their behalf.
    """
    definition = definitions.of(state)
    for _ in range(MAX_TRANSITIONS_PER_DECISION):
        spec = definition.spec(step)
        closed = [kind.value for kind in spec.requires_approved if not state.is_approved(kind)]
        if closed:
            state = state.evolve(step=step, active_job_id=None)
            return block(
                state,
                effects,
                f"gate closed before {step.value}: {', '.join(closed)} not approved",
                SYSTEM_ACTOR,
                resume_to=None,
            )
        attempt = state.attempt(step) + 1
        if step is Step.INGEST_DOCUMENTS:
            # A new attempt reads the documents when it runs: it sees every upload so far.
            state = state.evolve(uploads_during_ingestion=False)
        state = state.with_entry("attempts", step, attempt).evolve(
            step=step, status=WorkflowStatus.RUNNING, reason=None, blocked_from=None
        )
        effects.append(StepChanged(step, attempt, StepStatus.RUNNING))
        effects.append(
            Audit(_E.LIFECYCLE_WORKFLOW_STEP_STARTED, step, SYSTEM_ACTOR, {"attempt": attempt})
        )
        if spec.kind is not StepKind.INLINE:
            return _open(state, step, attempt, effects, requested_by)
        effects.append(StepChanged(step, attempt, StepStatus.COMPLETED))
        effects.append(Audit(_E.LIFECYCLE_WORKFLOW_STEP_COMPLETED, step, SYSTEM_ACTOR))
        following = definition.next(step)
        if following is None:
            effects.append(CloseAssessment())
            effects.append(Audit(_E.LIFECYCLE_WORKFLOW_COMPLETED, None, SYSTEM_ACTOR))
            return state.evolve(status=WorkflowStatus.COMPLETED)
        step = following
    raise AssertionError("a decision entered more steps than the lifecycle has")


def _open(
    state: RunState, step: Step, attempt: int, effects: list[Effect], requested_by: str
) -> RunState:
    """Start a job step or open a wait."""
    spec = definitions.of(state).spec(step)
    if spec.kind is StepKind.JOB:
        assert spec.job_kind is not None
        job_id = job_id_for(state, step, attempt)
        parameters: dict[str, object] = {
            "framework": state.framework,
            "frameworks": list(state.frameworks),
            "catalogs": dict(state.catalogs),
        }
        if state.categories:
            parameters["categories"] = {k: list(v) for k, v in state.categories.items()}
        if spec.produces is not None:
            parameters["artifact_kind"] = spec.produces.value
            parameters["artifact_version"] = state.artifacts.get(spec.produces, 0) + 1
        effects.append(
            EnqueueJob(job_id, spec.job_kind, step, attempt, parameters, requested_by=requested_by)
        )
        return state.evolve(active_job_id=job_id)
    effects.append(StepChanged(step, attempt, StepStatus.WAITING))
    if spec.kind is StepKind.WAIT_FOR_INPUT:
        effects.append(
            Audit(
                _E.LIFECYCLE_WORKFLOW_WAITING_FOR_INPUT,
                step,
                SYSTEM_ACTOR,
                {"awaits": spec.awaits.value if spec.awaits else None},
            )
        )
        return state.evolve(status=WorkflowStatus.WAITING_FOR_INPUT)
    metadata: dict[str, object] = {"awaits": spec.awaits.value if spec.awaits else None}
    return _waiting_for_approval(state, step, effects, metadata)


def _waiting_for_approval(
    state: RunState, step: Step, effects: list[Effect], metadata: dict[str, object]
) -> RunState:
    kind = APPROVED_AT[step]
    metadata |= {"artifact_kind": kind.value, "artifact_version": state.artifacts.get(kind)}
    effects.append(Audit(_E.LIFECYCLE_WORKFLOW_WAITING_FOR_APPROVAL, step, SYSTEM_ACTOR, metadata))
    return state.evolve(status=WorkflowStatus.WAITING_FOR_APPROVAL)
