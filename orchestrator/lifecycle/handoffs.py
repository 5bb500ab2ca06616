"""A run at a handoff: an effect outside the database needs a person's decision.

`external_effect_stuck` blocks the run where it stands (it resumes exactly there);
`handoff_resolved` returns it once a person resolved that handoff. One handoff at a time:
another one waits until the first is resolved, and a resolution waits until its run is at
that handoff, so the two signals may arrive in any order.
"""

from __future__ import annotations

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.signals import SignalEnvelope
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.lifecycle.approval_checks import ApprovalView
from orchestrator.lifecycle.effects import Audit, Effect
from orchestrator.lifecycle.outcome import Outcome, ignored, pending, rejected
from orchestrator.lifecycle.state import RunState
from orchestrator.lifecycle.transitions import block

_RESTING_ELSEWHERE = {
    WorkflowStatus.PENDING: "run has not started",
    WorkflowStatus.BLOCKED: "run is blocked",
    WorkflowStatus.FAILED: "run failed; it applies after the step is retried",
}


def _handoff_of(signal: SignalEnvelope) -> str:
    return str(signal.payload.get("handoff_id") or "").strip()


def stuck(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> Outcome:
    handoff = _handoff_of(signal)
    if not handoff:
        return rejected(state, "external_effect_stuck names a handoff_id")
    if state.handoff == handoff:
        return ignored(state, f"the run already waits at handoff {handoff}")
    elsewhere = _RESTING_ELSEWHERE.get(state.status)
    if elsewhere is not None:
        return pending(state, elsewhere)
    detail = str(signal.payload.get("detail") or "an effect outside the database").strip()
    effects: list[Effect] = []
    reason = f"handoff {handoff}: {detail}"
    blocked = block(state, effects, reason, signal.actor_id, resume_to=state.status)
    return Outcome(blocked.evolve(block_kind="manual_intervention", handoff=handoff), effects)


def resolved(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> Outcome:
    handoff = _handoff_of(signal)
    if not handoff:
        return rejected(state, "handoff_resolved names a handoff_id")
    if state.handoff != handoff:
        return pending(state, f"the run is not at handoff {handoff}")
    effects: list[Effect] = [
        Audit(
            AuditEventType.LIFECYCLE_WORKFLOW_RESUMED,
            state.step,
            signal.actor_id,
            {
                "handoff_id": handoff,
                "action": signal.payload.get("action"),
                "blocked_reason": state.reason,
            },
        )
    ]
    assert state.blocked_from is not None, "a handoff blocks a run where it stood"
    resumed = state.evolve(
        status=state.blocked_from, blocked_from=None, reason=None, block_kind=None, handoff=None
    )
    return Outcome(resumed, effects)


def resume_problem(state: RunState) -> str | None:
    """A plain resume may not step over a handoff: the effect's fate must be decided."""
    if state.handoff is None:
        return None
    return (
        f"the run waits at handoff {state.handoff}: resolve it (confirm_effect, "
        "confirm_absent, retry or cancel) instead of resuming"
    )
