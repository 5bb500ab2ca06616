"""A run's pinned definition: pinned at start, checked on every decision, migrated on
an operator's request (see lifecycle.definitions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.contracts.audit import SYSTEM_ACTOR, AuditEventType
from orchestrator.contracts.signals import OPERATOR_SIGNALS, SignalEnvelope, SignalFate
from orchestrator.contracts.signals import SignalType as S
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle import definitions
from orchestrator.lifecycle.approval_checks import ApprovalView
from orchestrator.lifecycle.definitions import LifecycleDefinition
from orchestrator.lifecycle.effects import Audit, CancelJobs, Effect, StepChanged
from orchestrator.lifecycle.outcome import Outcome, ignored, pending, rejected
from orchestrator.lifecycle.state import RunState

_E = AuditEventType
#: The error code of a run that failed because its definition is not shipped here.
UNAVAILABLE = "definition_unavailable"
#: Signals a run whose definition is gone still takes: it can be cancelled or migrated.
_STILL_TAKEN = frozenset({S.ASSESSMENT_CANCELLED, S.DEFINITION_MIGRATION_REQUESTED})
_OPEN = (
    WorkflowStatus.RUNNING,
    WorkflowStatus.WAITING_FOR_INPUT,
    WorkflowStatus.WAITING_FOR_APPROVAL,
)


def pin_at_start(state: RunState, payload: Mapping[str, Any]) -> RunState | str:
    """The start request names the definition the producer chose (the newest it ships);
    a start without one (recorded before pins existed) takes the newest shipped here."""
    pin = payload.get("definition")
    if pin is None:
        chosen = definitions.current()
        return state.evolve(definition_version=chosen.version, definition_hash=chosen.content_hash)
    try:
        version, content_hash = int(pin["version"]), str(pin["hash"])
    except (TypeError, KeyError, ValueError):
        return "definition must be {'version': <int>, 'hash': <sha256>}"
    return state.evolve(definition_version=version, definition_hash=content_hash)


def unavailable_outcome(state: RunState, signal: SignalEnvelope) -> Outcome | None:
    """None when the run's definition is here (or the signal does not need it); else what
    becomes of the signal: it waits for an upgraded worker, or the run fails with the
    reason and then takes only a migration or a cancel."""
    problem = definitions.unavailable(state)
    if problem is None or signal.type in _STILL_TAKEN:
        return None
    if state.status is WorkflowStatus.PENDING and signal.type is S.WORKFLOW_START_REQUESTED:
        return None
    if definitions.not_yet_shipped(state):
        return pending(state, f"{problem}: waiting for a worker that ships it")
    if state.status is WorkflowStatus.FAILED and (state.reason or "").startswith(UNAVAILABLE):
        if signal.type in OPERATOR_SIGNALS or signal.type is S.ASSESSMENT_RESUMED:
            return rejected(state, f"{problem}: migrate the run to a shipped definition")
        return pending(state, problem)
    effects: list[Effect] = []
    if state.step is not None and state.status in _OPEN:
        attempt = state.attempt(state.step)
        effects.append(StepChanged(state.step, attempt, StepStatus.FAILED, error=problem))
    if state.active_job_id is not None:
        effects.append(CancelJobs(problem))
    effects.append(
        Audit(_E.LIFECYCLE_WORKFLOW_FAILED, state.step, SYSTEM_ACTOR, {"error_code": UNAVAILABLE})
    )
    failed = state.evolve(
        status=WorkflowStatus.FAILED,
        reason=f"{UNAVAILABLE}: {problem}",
        active_job_id=None,
        blocked_from=None,
        block_kind=None,
    )
    # The signal itself is not acted on: the run cannot interpret it.
    return Outcome(failed, effects, SignalFate.IGNORED, f"the run failed: {problem}")


def migrate(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> Outcome:
    reason = str(signal.payload.get("reason") or "").strip()
    if not reason:
        return rejected(state, "a migration needs a reason")
    try:
        version = int(signal.payload["to_version"])
    except (KeyError, TypeError, ValueError):
        return rejected(state, "a migration names to_version (an integer)")
    target = definitions.find(version)
    problem = _migration_problem(state, target, version)
    if problem is not None:
        return rejected(state, problem)
    assert target is not None
    same_content = state.definition_hash in (None, target.content_hash)
    if version == state.definition_version and same_content:
        return ignored(state, f"the run is on {target.label} already")
    migration = target.migration_from(state.definition_version)
    if migration is None:
        return rejected(
            state, f"{target.label} declares no migration from v{state.definition_version}"
        )
    step = state.step
    moved_to = migration.steps.get(step, step) if step is not None else None
    if moved_to is not None and not target.has(moved_to):
        return rejected(
            state,
            f"{target.label} has no step {moved_to.value} and its migration from "
            f"v{state.definition_version} does not map it",
        )
    if moved_to != step and not _re_enters(state):
        return rejected(
            state,
            f"the run stands at {step.value if step else 'no step'}; a run moves to another "
            "step only while failed or blocked before it (it is entered again after)",
        )
    effects: list[Effect] = [
        Audit(
            _E.LIFECYCLE_WORKFLOW_DEFINITION_MIGRATED,
            moved_to,
            signal.actor_id,
            {
                "reason": reason,
                "from_version": state.definition_version,
                "from_hash": state.definition_hash,
                "to_version": target.version,
                "to_hash": target.content_hash,
                "from_step": step.value if step else None,
                "to_step": moved_to.value if moved_to else None,
            },
        )
    ]
    migrated = state.evolve(
        definition_version=target.version, definition_hash=target.content_hash, step=moved_to
    )
    return Outcome(migrated, effects)


def _migration_problem(
    state: RunState, target: LifecycleDefinition | None, version: int
) -> str | None:
    if target is None:
        shipped = ", ".join(d.label for d in definitions.shipped())
        return f"lifecycle definition v{version} is not shipped (this deployment ships {shipped})"
    if state.status is WorkflowStatus.PENDING:
        return "the run has not started; it starts on the definition it pinned"
    if state.status is WorkflowStatus.RUNNING:
        step = state.step.value if state.step else "a step"
        return f"the run is running {step}; migrate it while it waits, is blocked or failed"
    return None


def _re_enters(state: RunState) -> bool:
    """Its current step is entered again by the next retry or resume."""
    if state.status is WorkflowStatus.FAILED:
        return True
    return state.status is WorkflowStatus.BLOCKED and state.blocked_from is None
