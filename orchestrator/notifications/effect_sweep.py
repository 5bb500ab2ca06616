"""The effects sweep: settle effects whose worker was lost, send the due ones to workers."""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.config.sweep_registry import sweep
from orchestrator.contracts.clock import utcnow
from orchestrator.db.session import transaction
from orchestrator.engine.outside_effects import dispatch_effects
from orchestrator.notifications.effect_worker import EFFECTS, settle_lapsed
from orchestrator.service.handoffs import AfterHandoff


@dataclass(frozen=True)
class EffectSweep:
    lapsed: int
    dispatched: int


@sweep("effects")
def sweep_effects() -> EffectSweep:
    now = utcnow()
    after = AfterHandoff()
    with transaction() as session:
        lapsed = list(session.scalars(EFFECTS.lapsed(now).with_for_update(skip_locked=True)))
        settled = sum(settle_lapsed(session, effect, now, after) for effect in lapsed)
    after.send()
    return EffectSweep(settled, EFFECTS.dispatch_due(now, dispatch_effects))
