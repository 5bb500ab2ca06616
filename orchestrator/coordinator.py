"""Applies every pending signal of a run in one transaction, then publishes the outbox."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind, SignalEnvelope, SignalFate
from orchestrator.db.models import ApprovalEvent, InboxSignal
from orchestrator.db.session import transaction
from orchestrator.effects_writer import EffectWriter
from orchestrator.fleet import revoke
from orchestrator.lifecycle.approvals import ApprovalDecision, ApprovalView
from orchestrator.lifecycle.decide import decide
from orchestrator.observability import events as observe
from orchestrator.outbox import PublishedBatch, publish_messages
from orchestrator.runs import lock_run, save_state, state_of


@dataclass(frozen=True)
class CoordinationResult:
    decided: int
    still_pending: int
    status: str | None
    published: PublishedBatch | None = None


def coordinate(run_id: uuid.UUID) -> CoordinationResult:
    """The coordinator's whole job for one wake-up of one run."""
    with transaction() as session:
        result, writer = apply_pending(session, run_id)
    if writer is not None and writer.revoked:
        revoke(writer.revoked)
    if writer is None or not writer.outbox:
        return result
    return CoordinationResult(result.decided, result.still_pending, result.status,
                              publish_messages(writer.outbox))


def apply_pending(session: Session,
                  run_id: uuid.UUID) -> tuple[CoordinationResult, EffectWriter | None]:
    run = lock_run(session, run_id)
    if run is None:
        return CoordinationResult(0, 0, None), None
    rows = list(session.scalars(select(InboxSignal).where(
        InboxSignal.run_id == run_id, InboxSignal.fate == SignalFate.PENDING.value)
        .order_by(InboxSignal.id)))
    if not rows:
        return CoordinationResult(0, 0, run.status), None
    envelopes = {row.id: SignalEnvelope.model_validate(row.envelope) for row in rows}
    approvals = _approvals(session, envelopes.values())
    now = utcnow()
    writer = EffectWriter(session=session, run=run, now=now)
    state = state_of(run)
    decided = 0
    # Early signals stay pending; each pass re-offers them to the state the others made.
    while rows:
        undecided = []
        for row in rows:
            envelope = envelopes[row.id]
            approval = _as_seen_by(approvals.get(envelope.approval_event_id), envelope)
            decision = decide(state, envelope, approval)
            if decision.fate is SignalFate.PENDING:
                undecided.append(row)
                continue
            decided += 1
            observe.decided(session, envelope, decision, state)
            state = decision.state
            row.fate, row.reason, row.decided_at = decision.fate.value, decision.reason, now
            for effect in decision.effects:
                writer.apply(effect, envelope.trace_id, envelope.signal_id)
            if approval is not None and decision.fate is SignalFate.APPLIED:
                approvals[approval.approval_event_id] = _consumed(approval, envelope)
        if len(undecided) == len(rows):
            break
        rows = undecided
    if decided:
        save_state(session, run, state)
    session.flush()
    return CoordinationResult(decided, len(rows), state.status.value), writer


@dataclass(frozen=True)
class _Loaded:
    view: ApprovalView
    consumed_by: uuid.UUID | None


def _as_seen_by(loaded: _Loaded | None, envelope: SignalEnvelope) -> ApprovalView | None:
    """An event counts as used unless it was used by this very signal (replays)."""
    if loaded is None:
        return None
    used = loaded.consumed_by is not None and loaded.consumed_by != envelope.signal_id
    return replace(loaded.view, consumed=used)


def _consumed(approval: ApprovalView, envelope: SignalEnvelope) -> _Loaded:
    return _Loaded(approval, envelope.signal_id)


def _approvals(session: Session,
               envelopes: Iterable[SignalEnvelope]) -> dict[uuid.UUID | None, _Loaded]:
    ids = {e.approval_event_id for e in envelopes if e.approval_event_id}
    if not ids:
        return {}
    rows = session.scalars(select(ApprovalEvent).where(ApprovalEvent.id.in_(ids)))
    return {row.id: _Loaded(approval_view(row), row.consumed_by_signal_id) for row in rows}


def approval_view(row: ApprovalEvent) -> ApprovalView:
    return ApprovalView(
        approval_event_id=row.id, tenant_id=row.tenant_id,
        organization_id=row.organization_id, assessment_id=row.assessment_id,
        artifact_kind=ArtifactKind(row.artifact_kind), artifact_version=row.artifact_version,
        decision=ApprovalDecision(row.decision), approver_id=row.approver_id,
        approver_role=row.approver_role, consumed=row.consumed_at is not None)


__all__ = ["CoordinationResult", "apply_pending", "coordinate"]
