"""Applies every pending signal of a run in one transaction, then publishes the outbox."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind, SignalEnvelope, SignalFate
from orchestrator.db.session import transaction
from orchestrator.db.tables import APPROVALS, INBOX
from orchestrator.engine.effect_rows import EffectWriter, execute_rows
from orchestrator.engine.messages import revoke
from orchestrator.engine.outbox import OutboxEntry, PublishedBatch, publish_messages
from orchestrator.engine.outside_effects import dispatch_effects
from orchestrator.engine.run_events import dispatch_deliveries
from orchestrator.engine.run_rows import RunRecord, lock_run, save_state, state_of, try_lock_run
from orchestrator.lifecycle.approval_checks import ApprovalDecision, ApprovalView
from orchestrator.lifecycle.decide import decide
from orchestrator.observability import events as observe
from orchestrator.observability import tracing

_PENDING = (
    select(INBOX.c.id, INBOX.c.envelope)
    .where(INBOX.c.run_id == bindparam("run_id"), INBOX.c.fate == SignalFate.PENDING.value)
    .order_by(INBOX.c.id)
)
#: The run's first signal: its traceparent is the lifecycle's trace (the start request's).
_FIRST = (
    select(INBOX.c.envelope)
    .where(INBOX.c.run_id == bindparam("run_id"))
    .order_by(INBOX.c.id)
    .limit(1)
)
_DECIDED = (
    update(INBOX)
    .where(INBOX.c.id == bindparam("row_id"))
    .values(
        fate=bindparam("new_fate"),
        reason=bindparam("new_reason"),
        decided_at=bindparam("decided", type_=INBOX.c.decided_at.type),
    )
)
_APPROVALS = select(APPROVALS).where(APPROVALS.c.id.in_(bindparam("ids", expanding=True)))


@dataclass(frozen=True)
class CoordinationResult:
    decided: int
    still_pending: int
    status: str | None
    published: PublishedBatch | None = None


@dataclass
class AfterCommit:
    """What a coordinator transaction leaves to do once it committed."""

    outbox: list[OutboxEntry] = field(default_factory=list)
    revoked: list[str] = field(default_factory=list)
    deliveries: list[int] = field(default_factory=list)
    """Webhook deliveries of the run's transitions (a lost one is found by the sweep)."""
    effects: list[uuid.UUID] = field(default_factory=list)
    """Effects outside the database recorded (a lost one is found by the effects sweep)."""

    def run(self) -> PublishedBatch | None:
        if self.revoked:
            revoke(self.revoked)
        if self.deliveries:
            dispatch_deliveries(self.deliveries)
        if self.effects:
            dispatch_effects(self.effects)
        return publish_messages(self.outbox) if self.outbox else None


def coordinate(run_id: uuid.UUID) -> CoordinationResult:
    """The coordinator's whole job for one wake-up of one run."""
    with transaction() as session:
        result, after = apply_pending(session, run_id)
    published = after.run()
    return replace(result, published=published) if published else result


def apply_if_free(
    session: Session, run_id: uuid.UUID
) -> tuple[CoordinationResult, AfterCommit] | None:
    """Apply the run's pending signals in the caller's transaction, unless another
    transaction holds the run (then None at once: the caller must wake the coordinator)."""
    run = try_lock_run(session, run_id)
    if run is None:
        return None
    return _apply_locked(session, run)


def apply_pending(session: Session, run_id: uuid.UUID) -> tuple[CoordinationResult, AfterCommit]:
    run = lock_run(session, run_id)
    if run is None:
        return CoordinationResult(0, 0, None), AfterCommit()
    return _apply_locked(session, run)


def _apply_locked(session: Session, run: RunRecord) -> tuple[CoordinationResult, AfterCommit]:
    rows = session.execute(_PENDING, {"run_id": run.id}).all()
    if not rows:
        return CoordinationResult(0, 0, run.status), AfterCommit()
    envelopes = {row.id: SignalEnvelope.model_validate(row.envelope) for row in rows}
    approvals = _approvals(session, envelopes.values())
    now = utcnow()
    writer = EffectWriter(session=session, run=run, now=now, subscribed=run.subscribed)
    state = state_of(run)
    lifecycle = _lifecycle_trace(session, run.id)
    fates: list[dict[str, Any]] = []
    pending = [row.id for row in rows]
    # Early signals stay pending; each pass re-offers them to the state the others made.
    while pending:
        undecided = []
        for row_id in pending:
            envelope = envelopes[row_id]
            approval = _as_seen_by(approvals.get(envelope.approval_event_id), envelope)
            decision = decide(state, envelope, approval)
            if decision.fate is SignalFate.PENDING:
                undecided.append(row_id)
                continue
            observe.decided(session, envelope, decision, state)
            state = decision.state
            fates.append(
                {
                    "row_id": row_id,
                    "new_fate": decision.fate.value,
                    "new_reason": decision.reason,
                    "decided": now,
                }
            )
            # Under the signal's own trace: the jobs it enqueues carry it on.
            with _applying(envelope, decision.fate, lifecycle):
                for effect in decision.effects:
                    writer.apply(effect, envelope.trace_id, envelope.signal_id)
            if approval is not None and decision.fate is SignalFate.APPLIED:
                approvals[approval.approval_event_id] = _consumed(approval, envelope)
        if len(undecided) == len(pending):
            break
        pending = undecided
    if fates:
        execute_rows(session, _DECIDED, fates)
        save_state(session, run, state)
    writer.flush()
    return (
        CoordinationResult(len(fates), len(pending), state.status.value),
        AfterCommit(writer.outbox, writer.revoked, writer.deliveries, writer.recorded_effects),
    )


def _lifecycle_trace(session: Session, run_id: uuid.UUID) -> str | None:
    """The traceparent of the run's first signal, when tracing is on (off: no query)."""
    if not tracing.active():
        return None
    first = session.execute(_FIRST, {"run_id": run_id}).scalar()
    return first.get("traceparent") if isinstance(first, dict) else None


def _applying(
    envelope: SignalEnvelope, fate: SignalFate, lifecycle: str | None
) -> AbstractContextManager[None]:
    """The span of applying one signal, when tracing is on (off: nothing is built). It
    belongs to the lifecycle's trace, so one run is one trace; a person's request that sent
    the signal (its own trace) is linked."""
    if not tracing.active():
        return nullcontext()
    attributes = {
        "lifecycle.run_id": str(envelope.run_id),
        "lifecycle.trace_id": envelope.trace_id,
        "lifecycle.signal_id": str(envelope.signal_id),
        "lifecycle.step": envelope.step.value if envelope.step else "",
        "lifecycle.fate": fate.value,
    }
    own = envelope.traceparent
    if lifecycle is None or (own is not None and tracing.same_trace(own, lifecycle)):
        return tracing.span_under(own, f"apply {envelope.type.value}", attributes)
    return tracing.span_under(lifecycle, f"apply {envelope.type.value}", attributes, linked=own)


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


def approval_seen_by(session: Session, envelope: SignalEnvelope) -> ApprovalView | None:
    """The approval event a signal names, as a decision on that signal sees it."""
    return _as_seen_by(_approvals(session, [envelope]).get(envelope.approval_event_id), envelope)


def _approvals(
    session: Session, envelopes: Iterable[SignalEnvelope]
) -> dict[uuid.UUID | None, _Loaded]:
    ids = {e.approval_event_id for e in envelopes if e.approval_event_id}
    if not ids:
        return {}
    rows = session.execute(_APPROVALS, {"ids": list(ids)})
    return {row.id: _Loaded(approval_view(row), row.consumed_by_signal_id) for row in rows}


def approval_view(row: Any) -> ApprovalView:
    """An approval event row (ORM object or Core row) as the decision sees it."""
    return ApprovalView(
        approval_event_id=row.id,
        tenant_id=row.tenant_id,
        organization_id=row.organization_id,
        assessment_id=row.assessment_id,
        artifact_kind=ArtifactKind(row.artifact_kind),
        artifact_version=row.artifact_version,
        decision=ApprovalDecision(row.decision),
        approver_id=row.approver_id,
        approver_roles=tuple(row.approver_roles),
        consumed=row.consumed_at is not None,
        comment=row.comment,
        amender_waiver=bool(row.amender_waiver),
    )


__all__ = [
    "AfterCommit",
    "CoordinationResult",
    "apply_if_free",
    "apply_pending",
    "approval_seen_by",
    "coordinate",
]
