"""The effects sweep: settle effects whose worker was lost, send the due ones to workers."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from orchestrator.config.settings import get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.external_effects import EffectStatus
from orchestrator.db.effect_models import ExternalEffect
from orchestrator.db.session import transaction
from orchestrator.engine.outside_effects import dispatch_effects
from orchestrator.notifications.effect_worker import settle_lapsed
from orchestrator.service.handoffs import AfterHandoff


@dataclass(frozen=True)
class EffectSweep:
    lapsed: int
    dispatched: int


def sweep_effects() -> EffectSweep:
    settings = get_settings().sweeps
    now = utcnow()
    after = AfterHandoff()
    with transaction() as session:
        lapsed = list(
            session.scalars(
                select(ExternalEffect)
                .where(
                    ExternalEffect.status == EffectStatus.PERFORMING.value,
                    ExternalEffect.next_attempt_at < now,
                )
                .order_by(ExternalEffect.next_attempt_at)
                .limit(settings.batch)
                .with_for_update(skip_locked=True)
            )
        )
        settled = sum(settle_lapsed(session, effect, now, after) for effect in lapsed)
    after.send()
    with transaction() as session:
        due = list(
            session.scalars(
                select(ExternalEffect.id)
                .where(
                    ExternalEffect.status == EffectStatus.PENDING.value,
                    ExternalEffect.next_attempt_at <= now - settings.grace,
                )
                .order_by(ExternalEffect.next_attempt_at)
                .limit(settings.batch)
            )
        )
    dispatch_effects(due)
    return EffectSweep(settled, len(due))
