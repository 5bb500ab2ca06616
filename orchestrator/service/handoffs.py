"""Handoffs: an effect outside the database whose fate a person decides.

Opened by the effect's worker when nobody can tell whether it happened (sent, no answer),
when the target refused it on every attempt, or when the run's authority no longer allows
it. Opening blocks the run where it stands (a signal through its inbox), audits it and
tells the run's owner (`handoff.opened` to the tenant's webhooks; the console and the CLI
list it).

Resolving takes an action the handoff allows and an evidence reference or a comment, in
one transaction: the handoff row moves from open to resolved under a fence (a guarded
UPDATE; each claim raises the fence), the effect takes the action's status (or goes
again), an audit event and a `handoff_resolved` signal are written. Two operators racing
for one handoff: one resolves it, the other is told who did (409).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import HandoffConflict, InvalidInput, NotFound
from orchestrator.contracts.events import NotificationEvent, event_id
from orchestrator.contracts.external_effects import (
    EFFECT_SPECS,
    EffectKind,
    EffectStatus,
    HandoffAction,
    HandoffReason,
    allowed_actions,
)
from orchestrator.contracts.identity import Actor, Kick
from orchestrator.contracts.ids import new_id
from orchestrator.contracts.signals import SignalEnvelope, SignalType
from orchestrator.db.busy import retry_busy
from orchestrator.db.effect_models import ExternalEffect, Handoff
from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import read_transaction, transaction
from orchestrator.db.sql import aware
from orchestrator.engine import messages as fleet
from orchestrator.engine.audit_rows import append_audit
from orchestrator.engine.inbox import insert_signal
from orchestrator.engine.outside_effects import dispatch_effects, record_undo
from orchestrator.engine.tenant_events import dispatch, notify
from orchestrator.service.producer import load_run

EFFECTS_ACTOR = "system:effects"
OPEN, RESOLVED = "open", "resolved"
_E = AuditEventType
#: Effect statuses a handoff holds; resolving moves the effect out of them.
_AT_HANDOFF = (
    EffectStatus.OUTCOME_UNKNOWN.value,
    EffectStatus.FAILED.value,
    EffectStatus.REFUSED.value,
)


class HandoffView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: uuid.UUID
    run_id: uuid.UUID
    effect_id: uuid.UUID
    effect_kind: str
    artifact_kind: str | None
    artifact_version: int | None
    reason: str
    detail: str
    allowed_actions: list[str]
    owner: str
    status: str
    fence: int
    claimed_by: str | None
    claimed_until: datetime | None
    opened_at: datetime
    resolved_at: datetime | None
    resolved_by: str | None
    action: str | None
    evidence_ref: str | None
    comment: str | None

    @classmethod
    def of(cls, row: Handoff, effect: ExternalEffect) -> HandoffView:
        return cls(
            id=row.id,
            run_id=row.run_id,
            effect_id=row.effect_id,
            effect_kind=effect.kind,
            artifact_kind=effect.artifact_kind,
            artifact_version=effect.artifact_version,
            reason=row.reason,
            detail=row.detail,
            allowed_actions=list(row.allowed_actions),
            owner=row.owner,
            status=row.status,
            fence=row.fence,
            claimed_by=row.claimed_by,
            claimed_until=aware(row.claimed_until) if row.claimed_until else None,
            opened_at=aware(row.opened_at),
            resolved_at=aware(row.resolved_at) if row.resolved_at else None,
            resolved_by=row.resolved_by,
            action=row.action,
            evidence_ref=row.evidence_ref,
            comment=row.comment,
        )


@dataclass
class AfterHandoff:
    """What a transaction that opened or resolved a handoff sends once it committed."""

    kicks: set[uuid.UUID] = field(default_factory=set)
    deliveries: list[int] = field(default_factory=list)
    effects: list[uuid.UUID] = field(default_factory=list)
    later: list[tuple[uuid.UUID, float]] = field(default_factory=list)
    """Effects to try again after a backoff (seconds)."""

    def send(self, kick: Kick = fleet.kick) -> None:
        dispatch(self.deliveries)
        dispatch_effects(self.effects)
        for effect, seconds in self.later:
            dispatch_effects([effect], countdown=seconds)
        for run_id in sorted(self.kicks):
            kick(run_id)


# --- opened by the effect's worker -------------------------------------------------------


def open_handoff(
    session: Session,
    effect: ExternalEffect,
    reason: HandoffReason,
    detail: str,
    now: datetime,
    after: AfterHandoff,
) -> uuid.UUID:
    """In the worker's transaction that settled the effect as stuck."""
    run = session.get(WorkflowRun, effect.run_id)
    assert run is not None
    handoff_id = new_id()
    actions = [a.value for a in allowed_actions(reason, effect.idempotent)]
    described = f"{effect.kind} of {_what(effect)}: {detail}"
    session.add(
        Handoff(
            id=handoff_id,
            run_id=run.id,
            tenant_id=run.tenant_id,
            effect_id=effect.id,
            reason=reason.value,
            detail=described,
            allowed_actions=actions,
            owner=run.started_by,
            status=OPEN,
            fence=0,
            opened_at=now,
        )
    )
    facts = {
        "handoff_id": str(handoff_id),
        "effect_id": str(effect.id),
        "effect_kind": effect.kind,
        "reason": reason.value,
        "detail": described,
        "allowed_actions": actions,
        "owner": run.started_by,
    }
    append_audit(
        session, run, _E.LIFECYCLE_WORKFLOW_HANDOFF_OPENED, None, facts, now, EFFECTS_ACTOR
    )
    _signal(session, run, SignalType.EXTERNAL_EFFECT_STUCK, EFFECTS_ACTOR, facts, now, after)
    console = get_settings().webhooks.console_url.rstrip("/")
    after.deliveries += notify(
        session,
        event_id=event_id(handoff_id, "opened"),
        tenant_id=run.tenant_id,
        run_id=run.id,
        event=NotificationEvent.HANDOFF_OPENED,
        payload={
            **facts,
            "run_id": str(run.id),
            "assessment_id": str(run.assessment_id),
            "organization_id": run.organization_id,
            "console_url": f"{console}/runs/{run.id}#handoffs",
        },
        now=now,
    )
    return handoff_id


def _what(effect: ExternalEffect) -> str:
    if effect.artifact_kind is None:
        return "the run"
    return f"{effect.artifact_kind} v{effect.artifact_version}"


def settle_made(session: Session, effect: ExternalEffect, actor: str, now: datetime) -> list[Any]:
    """The effect happened (acknowledged, or confirmed by a person): audit it; an undo
    marks what it undid compensated; an effect whose version no longer stands is undone.
    The ids of effects recorded now (to send after commit)."""
    run = session.get(WorkflowRun, effect.run_id)
    assert run is not None
    facts = {
        "effect_id": str(effect.id),
        "effect_kind": effect.kind,
        "artifact_kind": effect.artifact_kind,
        "artifact_version": effect.artifact_version,
        "status": effect.status,
    }
    undone = effect.compensates_id or effect.notification_id
    if undone is not None:  # an undo: of an effect, or of a webhook event
        session.execute(
            update(ExternalEffect)
            .where(ExternalEffect.id == effect.compensates_id)
            .values(status=EffectStatus.COMPENSATED.value, updated_at=now)
            .execution_options(synchronize_session=False)
        )
        facts |= {"compensates": str(undone), "reason": effect.undo_reason}
        event = _E.LIFECYCLE_WORKFLOW_EFFECT_COMPENSATED
    else:
        event = _E.LIFECYCLE_WORKFLOW_EFFECT_PERFORMED
    append_audit(session, run, event, None, facts, now, actor)
    if (
        effect.undo_requested_at is not None
        and EFFECT_SPECS[EffectKind(effect.kind)].compensated_by
    ):
        return record_undo(session, effect, now)
    return []


# --- read ------------------------------------------------------------------------------


@retry_busy
def list_handoffs(
    actor: Actor, *, status: str | None = OPEN, run_id: uuid.UUID | None = None
) -> list[HandoffView]:
    with read_transaction() as session:
        query = (
            select(Handoff, ExternalEffect, WorkflowRun.organization_id)
            .join(ExternalEffect, ExternalEffect.id == Handoff.effect_id)
            .join(WorkflowRun, WorkflowRun.id == Handoff.run_id)
            .where(Handoff.tenant_id == actor.tenant_id)
            .order_by(Handoff.opened_at.desc())
        )
        if status is not None:
            query = query.where(Handoff.status == status)
        if run_id is not None:
            load_run(session, actor, run_id)
            query = query.where(Handoff.run_id == run_id)
        return [
            HandoffView.of(handoff, effect)
            for handoff, effect, organization in session.execute(query)
            if actor.sees(organization)
        ]


@retry_busy
def get_handoff(actor: Actor, handoff_id: uuid.UUID) -> HandoffView:
    with read_transaction() as session:
        handoff, effect = _load(session, actor, handoff_id)
        return HandoffView.of(handoff, effect)


def _load(session: Session, actor: Actor, handoff_id: uuid.UUID) -> tuple[Handoff, ExternalEffect]:
    handoff = session.get(Handoff, handoff_id)
    if handoff is None or handoff.tenant_id != actor.tenant_id:
        raise NotFound(f"handoff {handoff_id} not found")
    try:
        load_run(session, actor, handoff.run_id)
    except NotFound as error:
        raise NotFound(f"handoff {handoff_id} not found") from error
    effect = session.get(ExternalEffect, handoff.effect_id)
    assert effect is not None
    return handoff, effect


# --- claim and resolve -------------------------------------------------------------------


def _claimable(actor: Actor, now: datetime) -> Any:
    return or_(
        Handoff.claimed_by.is_(None),
        Handoff.claimed_until < now,
        Handoff.claimed_by == actor.actor_id,
    )


@retry_busy
def claim_handoff(actor: Actor, handoff_id: uuid.UUID) -> HandoffView:
    """Hold the handoff for `claim_s`: others cannot claim or resolve it meanwhile. The
    view's `fence` is the token a resolution names."""
    now = utcnow()
    until = now + timedelta(seconds=get_settings().effects.claim_s)
    with transaction() as session:
        handoff, effect = _load(session, actor, handoff_id)
        fence = session.scalar(
            update(Handoff)
            .where(Handoff.id == handoff_id, Handoff.status == OPEN, _claimable(actor, now))
            .values(claimed_by=actor.actor_id, claimed_until=until, fence=Handoff.fence + 1)
            .returning(Handoff.fence)
            .execution_options(synchronize_session=False)
        )
        if fence is None:
            raise _conflict(session, handoff_id, actor, None)
        run = session.get(WorkflowRun, handoff.run_id)
        assert run is not None
        append_audit(
            session,
            run,
            _E.LIFECYCLE_WORKFLOW_HANDOFF_CLAIMED,
            None,
            {"handoff_id": str(handoff_id), "fence": fence, "until": until.isoformat()},
            now,
            actor.actor_id,
        )
        session.refresh(handoff)
        return HandoffView.of(handoff, effect)


def resolve_handoff(
    actor: Actor,
    handoff_id: uuid.UUID,
    action: str,
    *,
    evidence_ref: str | None = None,
    comment: str | None = None,
    fence: int | None = None,
    kick: Kick = fleet.kick,
) -> HandoffView:
    """Resolve under the fence: with `fence`, only the holder of that claim may; without
    it, anyone while nobody else holds a claim (the claim and the resolution in one)."""
    chosen = _action(action)
    evidence_ref, comment = (evidence_ref or "").strip() or None, (comment or "").strip() or None
    if evidence_ref is None and comment is None:
        raise InvalidInput("resolving a handoff needs an evidence reference or a comment")
    after = AfterHandoff()
    view = _resolve(actor, handoff_id, chosen, evidence_ref, comment, fence, after)
    after.send(kick)
    return view


@retry_busy
def _resolve(
    actor: Actor,
    handoff_id: uuid.UUID,
    action: HandoffAction,
    evidence_ref: str | None,
    comment: str | None,
    fence: int | None,
    after: AfterHandoff,
) -> HandoffView:
    now = utcnow()
    with transaction() as session:
        handoff, effect = _load(session, actor, handoff_id)
        if action.value not in handoff.allowed_actions:
            raise InvalidInput(
                f"{action.value} is not offered at this handoff ({handoff.reason}); "
                f"allowed: {', '.join(handoff.allowed_actions)}"
            )
        held = (
            (Handoff.fence == fence) & (Handoff.claimed_by == actor.actor_id)
            if fence is not None
            else _claimable(actor, now)
        )
        resolved = session.scalar(
            update(Handoff)
            .where(Handoff.id == handoff_id, Handoff.status == OPEN, held)
            .values(
                status=RESOLVED,
                fence=Handoff.fence + 1,
                claimed_until=None,
                resolved_at=now,
                resolved_by=actor.actor_id,
                action=action.value,
                evidence_ref=evidence_ref,
                comment=comment,
            )
            .returning(Handoff.fence)
            .execution_options(synchronize_session=False)
        )
        if resolved is None:
            raise _conflict(session, handoff_id, actor, fence)
        after.effects += _take_action(session, effect, action, actor, now)
        _record_resolution(session, handoff, action, evidence_ref, comment, actor, now, after)
        session.refresh(handoff)
        session.refresh(effect)
        return HandoffView.of(handoff, effect)


def _action(action: str) -> HandoffAction:
    try:
        return HandoffAction(action)
    except ValueError as error:
        known = ", ".join(a.value for a in HandoffAction)
        raise InvalidInput(f"unknown handoff action {action!r}; known: {known}") from error


def _take_action(
    session: Session, effect: ExternalEffect, action: HandoffAction, actor: Actor, now: datetime
) -> list[Any]:
    """The effect after the person's decision; the ids of effects to send now."""
    again = {"status": EffectStatus.PENDING.value, "attempts": 0, "next_attempt_at": now}
    wanted = effect.compensates_id is not None or effect.undo_requested_at is None
    changes: dict[str, Any] = {
        HandoffAction.CONFIRM_EFFECT: {"status": EffectStatus.CONFIRMED.value},
        # It did not happen: make it again while it is still wanted (now safe).
        HandoffAction.CONFIRM_ABSENT: again if wanted else {"status": EffectStatus.ABSENT.value},
        HandoffAction.RETRY: again if wanted else {"status": EffectStatus.CANCELLED.value},
        HandoffAction.CANCEL: {"status": EffectStatus.CANCELLED.value},
    }[action]
    moved = session.execute(
        update(ExternalEffect)
        .where(ExternalEffect.id == effect.id, ExternalEffect.status.in_(_AT_HANDOFF))
        .values(updated_at=now, **changes)
        .execution_options(synchronize_session=False)
    )
    assert moved.rowcount == 1, "a handoff's effect waits at the handoff"  # type: ignore[attr-defined]
    session.refresh(effect)
    if action is HandoffAction.CONFIRM_EFFECT:
        return settle_made(session, effect, actor.actor_id, now)
    return [effect.id] if effect.status == EffectStatus.PENDING.value else []


def _record_resolution(
    session: Session,
    handoff: Handoff,
    action: HandoffAction,
    evidence_ref: str | None,
    comment: str | None,
    actor: Actor,
    now: datetime,
    after: AfterHandoff,
) -> None:
    run = session.get(WorkflowRun, handoff.run_id)
    assert run is not None
    facts = {
        "handoff_id": str(handoff.id),
        "effect_id": str(handoff.effect_id),
        "action": action.value,
        "evidence_ref": evidence_ref,
        "comment": comment,
    }
    append_audit(
        session, run, _E.LIFECYCLE_WORKFLOW_HANDOFF_RESOLVED, None, facts, now, actor.actor_id
    )
    _signal(session, run, SignalType.HANDOFF_RESOLVED, actor.actor_id, facts, now, after)


def _signal(
    session: Session,
    run: WorkflowRun,
    kind: SignalType,
    actor: str,
    facts: dict[str, Any],
    now: datetime,
    after: AfterHandoff,
) -> None:
    """The handoff's news for its run, through the inbox: once per handoff and kind."""
    recorded = insert_signal(
        session,
        SignalEnvelope(
            type=kind,
            run_id=run.id,
            tenant_id=run.tenant_id,
            organization_id=run.organization_id,
            assessment_id=run.assessment_id,
            trace_id=run.trace_id,
            actor_id=actor,
            idempotency_key=f"handoff:{facts['handoff_id']}:{kind.value}",
            payload=facts,
            received_at=now,
        ),
    )
    if not recorded.duplicate:
        after.kicks.add(run.id)


def _conflict(
    session: Session, handoff_id: uuid.UUID, actor: Actor, fence: int | None
) -> HandoffConflict:
    """Why the guarded UPDATE changed nothing, read after it (the row as it is now)."""
    row = session.execute(select(Handoff).where(Handoff.id == handoff_id)).scalar_one()
    session.refresh(row)
    if row.status == RESOLVED:
        return HandoffConflict(
            f"handoff {handoff_id} was resolved by {row.resolved_by} ({row.action}) "
            f"at {aware(row.resolved_at).isoformat() if row.resolved_at else 'an earlier time'}",
            resolved_by=row.resolved_by,
            action=row.action,
        )
    if fence is not None and row.fence != fence:
        return HandoffConflict(
            f"fence {fence} is stale: handoff {handoff_id} was claimed again "
            f"(fence {row.fence}, by {row.claimed_by})",
            fence=row.fence,
        )
    until = aware(row.claimed_until).isoformat() if row.claimed_until else "now"
    return HandoffConflict(
        f"handoff {handoff_id} is claimed by {row.claimed_by} until {until}",
        claimed_by=row.claimed_by,
    )
