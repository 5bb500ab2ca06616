"""Operator commands (API, celery CLI and Python): each is a signal with a reason and a key.

They go through the inbox like any signal, so they are durable, idempotent by key, and
decided by the lifecycle under the run's lock.
"""

from __future__ import annotations

import uuid
from typing import Any

from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.identity import Actor, Kick
from orchestrator.contracts.signals import ArtifactKind, SignalType
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.busy import retry_busy
from orchestrator.db.session import read_transaction
from orchestrator.engine import messages as fleet
from orchestrator.engine.run_rows import state_of
from orchestrator.lifecycle.definition import PRODUCER_OF
from orchestrator.lifecycle.rewind import RewindPlan, rewind_plan, rewind_problem
from orchestrator.service.producer import load_run, record_signal
from orchestrator.service.read_models import SignalReceipt


def _reason(reason: str) -> str:
    if not reason or not reason.strip():
        raise InvalidInput("a reason is required")
    return reason.strip()


def _command(
    signal: SignalType,
    actor: Actor,
    run_id: uuid.UUID,
    reason: str,
    idempotency_key: str,
    kick: Kick,
    **payload: Any,
) -> SignalReceipt:
    """An operator command: a signal with the person's reason, recorded in the run's inbox."""
    return record_signal(
        actor,
        run_id,
        signal,
        idempotency_key,
        payload={"reason": _reason(reason), **payload},
        kick=kick,
    )


def cancel_run(
    actor: Actor, run_id: uuid.UUID, *, reason: str, idempotency_key: str, kick: Kick = fleet.kick
) -> SignalReceipt:
    return _command(SignalType.ASSESSMENT_CANCELLED, actor, run_id, reason, idempotency_key, kick)


def block_run(
    actor: Actor,
    run_id: uuid.UUID,
    *,
    reason: str,
    idempotency_key: str,
    kind: str = "manual_intervention",
    kick: Kick = fleet.kick,
) -> SignalReceipt:
    return _command(
        SignalType.ASSESSMENT_BLOCKED, actor, run_id, reason, idempotency_key, kick, kind=kind
    )


def resume_run(
    actor: Actor, run_id: uuid.UUID, *, reason: str, idempotency_key: str, kick: Kick = fleet.kick
) -> SignalReceipt:
    return _command(SignalType.ASSESSMENT_RESUMED, actor, run_id, reason, idempotency_key, kick)


def retry_step(
    actor: Actor, run_id: uuid.UUID, *, reason: str, idempotency_key: str, kick: Kick = fleet.kick
) -> SignalReceipt:
    """Run the failed step again as a new attempt."""
    return _command(SignalType.STEP_RETRY_REQUESTED, actor, run_id, reason, idempotency_key, kick)


def reprocess_step(
    actor: Actor,
    run_id: uuid.UUID,
    step: str,
    *,
    reason: str,
    idempotency_key: str,
    new_version: bool,
    dry_run: bool = False,
    kick: Kick = fleet.kick,
) -> SignalReceipt | RewindPlan:
    """Rewind to `step`: downstream work is superseded and its approvals collected again.
    With dry_run, only say what would be superseded."""
    target = _step(step)
    reason = _reason(reason)
    if dry_run:
        return plan_reprocess(actor, run_id, target, new_version)
    return record_signal(
        actor,
        run_id,
        SignalType.STEP_REPROCESS_REQUESTED,
        idempotency_key,
        payload={"step": target.value, "reason": reason, "new_version": new_version},
        kick=kick,
    )


def request_new_version(
    actor: Actor,
    run_id: uuid.UUID,
    artifact_kind: str,
    *,
    reason: str,
    idempotency_key: str,
    kick: Kick = fleet.kick,
) -> SignalReceipt:
    """Draft a new version of an artifact, e.g. after a reviewer sent it back."""
    try:
        kind = ArtifactKind(artifact_kind)
    except ValueError as error:
        raise InvalidInput(f"unknown artifact kind {artifact_kind!r}") from error
    return record_signal(
        actor,
        run_id,
        SignalType.ARTIFACT_REVISION_REQUESTED,
        idempotency_key,
        payload={"artifact_kind": kind.value, "reason": _reason(reason)},
        kick=kick,
    )


def migrate_definition(
    actor: Actor,
    run_id: uuid.UUID,
    to_version: int,
    *,
    reason: str,
    idempotency_key: str,
    kick: Kick = fleet.kick,
) -> SignalReceipt:
    """Move the run to another shipped lifecycle definition that declares a migration
    from the run's own (the lifecycle refuses it, with the reason, otherwise)."""
    return _command(
        SignalType.DEFINITION_MIGRATION_REQUESTED,
        actor,
        run_id,
        reason,
        idempotency_key,
        kick,
        to_version=int(to_version),
    )


@retry_busy
def plan_reprocess(actor: Actor, run_id: uuid.UUID, target: Step, new_version: bool) -> RewindPlan:
    with read_transaction() as session:
        state = state_of(load_run(session, actor, run_id))
    if state.status.is_terminal:
        raise InvalidInput(f"the run is {state.status.value}; it can no longer change")
    problem = rewind_problem(state, target, new_version)
    if problem is not None:
        raise InvalidInput(problem)
    return rewind_plan(state, target)


def _step(step: str) -> Step:
    try:
        return Step(step)
    except ValueError as error:
        raise InvalidInput(f"unknown step {step!r}") from error


__all__ = [
    "PRODUCER_OF",
    "block_run",
    "cancel_run",
    "migrate_definition",
    "plan_reprocess",
    "reprocess_step",
    "request_new_version",
    "resume_run",
    "retry_step",
]
