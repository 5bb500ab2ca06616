"""A reviewer's amendment: the rows of a draft changed by a person become its next version,
and that version is the one awaiting approval (approvals of the older one no longer count).
"""

from __future__ import annotations

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.signals import ArtifactKind, SignalEnvelope
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.approval_checks import ApprovalView
from orchestrator.lifecycle.approval_signals import position
from orchestrator.lifecycle.definition import (
    APPROVAL_WAIT_FOR,
    APPROVED_ANY_TIME,
    PRODUCER_OF,
    SCOPE_APPROVAL_DEADLINE,
)
from orchestrator.lifecycle.effects import ArtifactStatusChanged, Audit, Effect
from orchestrator.lifecycle.outcome import Outcome, ignored, pending, rejected
from orchestrator.lifecycle.report_redraft import redraft_report
from orchestrator.lifecycle.state import RunState


def _wait_of(kind: ArtifactKind) -> Step:
    return APPROVAL_WAIT_FOR.get(kind, SCOPE_APPROVAL_DEADLINE)


def amendment_problem(state: RunState, kind: ArtifactKind, based_on: int) -> str | None:
    """Why `kind` cannot be amended from version `based_on` now, or None."""
    current = state.artifacts.get(kind)
    if current is None:
        return f"no {kind.value} draft exists yet"
    if state.is_approved(kind):
        return f"{kind.value} version {current} is already approved; it can no longer change"
    if based_on != current:
        return (
            f"the amendment is based on {kind.value} version {based_on}, but version "
            f"{current} is the current draft"
        )
    return None


def amend(state: RunState, signal: SignalEnvelope, _: ApprovalView | None) -> Outcome:
    payload = signal.payload
    try:
        kind = ArtifactKind(str(payload.get("artifact_kind")))
        based_on, version = int(payload["based_on"]), int(payload["version"])
    except (ValueError, KeyError, TypeError):
        return rejected(state, "an amendment names artifact_kind, based_on and version")
    if kind not in PRODUCER_OF or version != based_on + 1:
        return rejected(
            state, f"{kind.value} version {version} is not an amendment of version {based_on}"
        )
    if state.artifacts.get(kind) == version:
        return ignored(state, f"{kind.value} version {version} is already the current draft")
    where = position(state, _wait_of(kind))
    if where > 0 and kind not in APPROVED_ANY_TIME:
        return ignored(state, f"the {_wait_of(kind).value} gate is already open")
    if where < 0 and kind not in state.artifacts:
        return pending(state, f"run has not drafted {kind.value} yet")
    problem = amendment_problem(state, kind, based_on)
    if problem is not None:
        return rejected(state, problem)
    effects: list[Effect] = [
        ArtifactStatusChanged(kind, based_on, "superseded"),
        Audit(
            AuditEventType.LIFECYCLE_WORKFLOW_ARTIFACT_AMENDED,
            state.step,
            signal.actor_id,
            {
                "artifact_kind": kind.value,
                "based_on": based_on,
                "version": version,
                "reason": str(payload.get("reason") or ""),
                "rows": payload.get("rows", []),
            },
        ),
    ]
    state = (
        state.drafted(kind, signal.actor_id)
        .with_entry("artifacts", kind, version)
        .without_entry("collected", kind)
        .without_entry("rejected", kind)
    )
    if kind is ArtifactKind.REPORT and where == 0:
        # The report renders its statement: the amended version is drafted again.
        return Outcome(redraft_report(state, effects, signal.actor_id), effects)
    if state.status is WorkflowStatus.WAITING_FOR_INPUT and where == 0:
        # The version a reviewer sent back is replaced: the gate waits for approvals again.
        state = state.evolve(status=WorkflowStatus.WAITING_FOR_APPROVAL, reason=None)
    return Outcome(state, effects)
