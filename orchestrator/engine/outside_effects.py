"""Recording effects outside the database, in the transaction that decided them.

A `PublishDraft` records one export per active export target of the tenant. A
`Compensate` marks each effect of that version (or of the whole run) to be undone: one
already made gets its undo recorded now, one not started is cancelled, one whose fate is
still open (being made, or at a handoff) is undone by whoever settles it as made. It also
withdraws every `approval.requested` webhook sent for that version. Ids derive from what
the effect is, so recording twice records once and each undo runs once.

The ids recorded are sent to a worker after commit; the effects sweep finds a lost one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from orchestrator.contracts.audit import SYSTEM_ACTOR, AuditEventType
from orchestrator.contracts.external_effects import (
    EFFECT_SPECS,
    WITHDRAWN_NOTIFICATIONS,
    EffectKind,
    EffectStatus,
)
from orchestrator.db.effect_models import ExportTarget, ExternalEffect
from orchestrator.db.models import Artifact
from orchestrator.db.ops_models import Notification, NotificationDelivery
from orchestrator.db.sql import insert_for
from orchestrator.engine.routing import NOTIFICATIONS_QUEUE
from orchestrator.lifecycle.effects import Audit, Compensate, PublishDraft

_NAMESPACE = uuid.UUID("5a3e0f7c-1d2b-4c8e-9f6a-7b1c2d3e4f50")
PERFORM_TASK = "effects.perform"
#: Effects that something undoes (an undo is never undone itself).
_UNDOABLE = tuple(kind.value for kind, spec in EFFECT_SPECS.items() if spec.compensated_by)
_SETTLED = (EffectStatus.ABSENT.value, EffectStatus.CANCELLED.value)


def effect_id(*parts: object) -> uuid.UUID:
    """The same effect always gets the same id (receivers dedupe on it too)."""
    return uuid.uuid5(_NAMESPACE, ":".join(str(part) for part in parts))


def new_effect(
    run: Any, kind: EffectKind, target: uuid.UUID, now: datetime, **values: Any
) -> dict[str, Any]:
    """The row of a pending effect of `run` (anything with `id` and `tenant_id`)."""
    return {
        "run_id": run.id,
        "tenant_id": run.tenant_id,
        "kind": kind.value,
        "target_id": target,
        "status": EffectStatus.PENDING.value,
        "attempts": 0,
        "next_attempt_at": now,
        "created_at": now,
        "updated_at": now,
        **values,
    }


def insert_effects(session: Session, rows: Sequence[dict[str, Any]]) -> list[uuid.UUID]:
    """Insert each effect once; the ids of those new now."""
    if not rows:
        return []
    return list(
        session.scalars(
            insert_for(session, ExternalEffect)
            .values(list(rows))
            .on_conflict_do_nothing(index_elements=["id"])
            .returning(ExternalEffect.id)
        )
    )


def record_undo(session: Session, effect: ExternalEffect, now: datetime) -> list[uuid.UUID]:
    """The undo of an effect that was made (once, whoever asks); its id if new."""
    spec = EFFECT_SPECS[EffectKind(effect.kind)]
    if spec.compensated_by is None:
        return []
    undo = new_effect(
        _RunOf(effect.run_id, effect.tenant_id),
        spec.compensated_by,
        effect.target_id,
        now,
        id=effect_id(effect.id, "undo"),
        artifact_kind=effect.artifact_kind,
        artifact_version=effect.artifact_version,
        compensates_id=effect.id,
        idempotent=bool(EFFECT_SPECS[spec.compensated_by].idempotent),
        undo_reason=effect.undo_reason,
    )
    return insert_effects(session, [undo])


@dataclass(frozen=True)
class _RunOf:
    id: uuid.UUID
    tenant_id: str


@dataclass
class OutsideEffects:
    """The effects outside the database one coordinator transaction records."""

    session: Session
    run: Any
    now: datetime
    recorded: list[uuid.UUID] = field(default_factory=list)
    """New effects: sent to a worker after commit."""

    def publish(self, draft: PublishDraft) -> None:
        targets = self.session.execute(
            select(ExportTarget.id, ExportTarget.artifact_kinds, ExportTarget.idempotent).where(
                ExportTarget.tenant_id == self.run.tenant_id, ExportTarget.active.is_(True)
            )
        ).all()
        rows = [
            new_effect(
                self.run,
                EffectKind.EXPORT,
                target,
                self.now,
                id=effect_id(self.run.id, draft.kind.value, draft.version, target, "export"),
                artifact_kind=draft.kind.value,
                artifact_version=draft.version,
                idempotent=idempotent,
            )
            for target, kinds, idempotent in targets
            if not kinds or draft.kind.value in kinds
        ]
        self.recorded += insert_effects(self.session, rows)

    def compensate(self, ask: Compensate) -> list[Audit]:
        undone = self._undo_made(ask) + self._withdraw_requests(ask)
        self.recorded += undone
        if not undone:
            return []
        return [
            Audit(
                AuditEventType.LIFECYCLE_WORKFLOW_COMPENSATION_STARTED,
                None,
                SYSTEM_ACTOR,
                {
                    "reason": ask.reason,
                    "artifact_kind": ask.kind.value if ask.kind else None,
                    "artifact_version": ask.version,
                    "effects": sorted(str(effect) for effect in undone),
                },
            )
        ]

    def _undo_made(self, ask: Compensate) -> list[uuid.UUID]:
        marked = list(
            self.session.scalars(
                update(ExternalEffect)
                .where(*self._of_version(ask))
                .values(undo_requested_at=self.now, undo_reason=ask.reason)
                .returning(ExternalEffect)
                .execution_options(synchronize_session=False)
            )
        )
        undone: list[uuid.UUID] = []
        for effect in marked:
            if EffectStatus(effect.status).happened:
                undone += record_undo(self.session, effect, self.now)
            elif effect.status == EffectStatus.PENDING.value:
                # Never made: it never will be. Claimed meanwhile: its worker undoes it.
                self.session.execute(
                    update(ExternalEffect)
                    .where(
                        ExternalEffect.id == effect.id,
                        ExternalEffect.status == EffectStatus.PENDING.value,
                    )
                    .values(status=EffectStatus.CANCELLED.value, updated_at=self.now)
                    .execution_options(synchronize_session=False)
                )
        return undone

    def _of_version(self, ask: Compensate) -> list[Any]:
        where = [
            ExternalEffect.run_id == self.run.id,
            ExternalEffect.kind.in_(_UNDOABLE),
            ExternalEffect.undo_requested_at.is_(None),
            ExternalEffect.status.not_in(_SETTLED),
        ]
        if ask.kind is not None:
            where += [
                ExternalEffect.artifact_kind == ask.kind.value,
                ExternalEffect.artifact_version == ask.version,
            ]
        return where

    def _withdraw_requests(self, ask: Compensate) -> list[uuid.UUID]:
        sent = self.session.execute(
            select(Notification.id, Notification.event_type, Notification.payload).where(
                Notification.run_id == self.run.id,
                Notification.event_type.in_(list(WITHDRAWN_NOTIFICATIONS)),
            )
        ).all()
        still_open = self._unapproved(sent)
        rows: list[dict[str, Any]] = []
        for notification_id, event_type, payload in sent:
            version = (payload.get("gate"), payload.get("version"))
            wanted = ask.kind is None or version == (ask.kind.value, ask.version)
            if not wanted or version not in still_open:
                continue
            kind = WITHDRAWN_NOTIFICATIONS[event_type]
            rows += [
                new_effect(
                    self.run,
                    kind,
                    subscription,
                    self.now,
                    id=effect_id(notification_id, subscription, "withdraw"),
                    artifact_kind=version[0],
                    artifact_version=version[1],
                    notification_id=notification_id,
                    idempotent=bool(EFFECT_SPECS[kind].idempotent),
                    undo_reason=ask.reason,
                )
                for subscription in self._told(notification_id)
            ]
        return insert_effects(self.session, rows)

    def _unapproved(self, sent: Iterable[Any]) -> set[tuple[Any, Any]]:
        """(kind, version) of the requests whose version was not approved: withdrawing a
        request someone already granted would tell subscribers something untrue."""
        kinds = {payload.get("gate") for _, _, payload in sent}
        if not kinds:
            return set()
        rows = self.session.execute(
            select(Artifact.kind, Artifact.version).where(
                Artifact.run_id == self.run.id,
                Artifact.kind.in_([k for k in kinds if k]),
                Artifact.status != "approved",
            )
        ).all()
        return {(kind, version) for kind, version in rows}

    def _told(self, notification_id: uuid.UUID) -> list[uuid.UUID]:
        """Subscriptions the request went to: each is told it was withdrawn (whatever
        event types it filters on: it holds a request that no longer stands)."""
        return list(
            self.session.scalars(
                select(NotificationDelivery.subscription_id).where(
                    NotificationDelivery.notification_id == notification_id
                )
            )
        )


def dispatch_effects(effect_ids: Sequence[uuid.UUID], countdown: float | None = None) -> None:
    """After commit: ask a worker to make each, now or after `countdown` seconds (a lost
    message is found by the effects sweep; a duplicate finds the effect claimed)."""
    from orchestrator.engine.messages import get_app

    app = get_app()
    for effect in effect_ids:
        app.send_task(
            PERFORM_TASK, args=[str(effect)], queue=NOTIFICATIONS_QUEUE, countdown=countdown
        )
