"""Making one effect outside the database, at most one attempt at a time.

1. Claim it under a lease (notifications.leases: pending and due -> performing); for an
   effect made on the starter's behalf, re-check the run's authority; build the request.
2. Send it outside any transaction.
3. Settle it, guarded by the attempt number (a worker whose lease lapsed cannot overwrite
   a newer attempt): acknowledged -> succeeded; refused or not sent -> tried again with
   backoff, then a handoff; sent without an answer -> tried again only when repeating it
   is harmless, else at once a handoff (outcome unknown); authority revoked -> a handoff.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from orchestrator.config.effects import EffectSettings
from orchestrator.config.settings import get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.external_effects import (
    EFFECT_SPECS,
    EffectKind,
    EffectStatus,
    HandoffReason,
)
from orchestrator.db.effect_models import ExternalEffect
from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.db.sql import aware
from orchestrator.notifications.effect_requests import (
    EffectRequest,
    build_request,
    target_active,
)
from orchestrator.notifications.effect_transport import Answer, Send, send
from orchestrator.notifications.leases import LeasedRows, exhausted
from orchestrator.service.authority import authority_problem
from orchestrator.service.handoffs import EFFECTS_ACTOR, AfterHandoff, open_handoff, settle_made

log = logging.getLogger(__name__)

EFFECTS = LeasedRows(
    ExternalEffect, EffectStatus.PENDING.value, EffectStatus.PERFORMING.value, stamp="updated_at"
)


@dataclass(frozen=True)
class Claim:
    effect_id: uuid.UUID
    attempt: int
    request: EffectRequest | None = None
    refused: str | None = None
    """The run's authority does not allow it: not sent."""
    not_ready: str | None = None
    """It cannot be built now (its draft not written yet): not sent."""


def perform_effect(
    effect_id: uuid.UUID, transport: Send = send, settings: EffectSettings | None = None
) -> EffectStatus | None:
    """One attempt; None when the effect was not due (done, claimed, or backing off)."""
    settings = settings or get_settings().effects
    claim = _claim(effect_id, utcnow(), settings)
    if claim is None:
        return None
    if claim.request is None:
        return _settle(claim, None, settings)
    answer = transport(
        claim.request.url, claim.request.body, claim.request.headers, settings.timeout_s
    )
    return _settle(claim, answer, settings)


def _claim(effect_id: uuid.UUID, now: datetime, settings: EffectSettings) -> Claim | None:
    with transaction() as session:
        attempt = EFFECTS.claim(session, effect_id, now, settings)
        if attempt is None:
            return None
        effect = session.get(ExternalEffect, effect_id)
        run = session.get(WorkflowRun, effect.run_id) if effect is not None else None
        assert effect is not None and run is not None
        if effect.compensates_id is None and not target_active(session, effect):
            return Claim(effect_id, attempt, not_ready="its target was deactivated")
        if EFFECT_SPECS[EffectKind(effect.kind)].acts_for_starter:
            refused = authority_problem(session, run.authority)
            if refused is not None:
                return Claim(effect_id, attempt, refused=refused)
        built = build_request(session, effect, run, now)
        if isinstance(built, str):
            return Claim(effect_id, attempt, not_ready=built)
        return Claim(effect_id, attempt, request=built)


def _settle(claim: Claim, answer: Answer | None, settings: EffectSettings) -> EffectStatus | None:
    now = utcnow()
    after = AfterHandoff()
    with transaction() as session:
        effect = session.get(ExternalEffect, claim.effect_id, with_for_update=True)
        if effect is None or not EFFECTS.holds(effect, claim.attempt):
            return None  # its lease lapsed and the sweep took it over
        status = _next(session, effect, claim, answer, settings, now, after)
    after.send()
    return status


def _next(
    session: Session,
    effect: ExternalEffect,
    claim: Claim,
    answer: Answer | None,
    settings: EffectSettings,
    now: datetime,
    after: AfterHandoff,
) -> EffectStatus:
    effect.updated_at = now
    effect.status_code = answer.status_code if answer is not None else None
    effect.last_error = (answer.error if answer is not None else None) or claim.not_ready
    if claim.refused is not None:
        effect.last_error = claim.refused
        return _stuck(
            session, effect, EffectStatus.REFUSED, HandoffReason.AUTHORITY_REVOKED, now, after
        )
    if answer is not None and answer.ok:
        effect.status = EffectStatus.SUCCEEDED.value
        session.flush()
        after.effects += settle_made(session, effect, EFFECTS_ACTOR, now)
        return EffectStatus.SUCCEEDED
    if effect.compensates_id is None and not target_active(session, effect):
        effect.status = EffectStatus.CANCELLED.value
        effect.last_error = "its target was deactivated"
        return EffectStatus.CANCELLED
    unknown = answer is not None and answer.unknown
    again = not exhausted(claim.attempt, settings) and (effect.idempotent or not unknown)
    if again:
        effect.status = EffectStatus.PENDING.value
        wait = settings.backoff(claim.attempt)  # jittered: drawn once for both
        effect.next_attempt_at = now + wait
        after.later.append((effect.id, wait.total_seconds()))
        return EffectStatus.PENDING
    if unknown:
        return _stuck(
            session, effect, EffectStatus.OUTCOME_UNKNOWN, HandoffReason.OUTCOME_UNKNOWN, now, after
        )
    return _stuck(session, effect, EffectStatus.FAILED, HandoffReason.EFFECT_FAILED, now, after)


def _stuck(
    session: Session,
    effect: ExternalEffect,
    status: EffectStatus,
    reason: HandoffReason,
    now: datetime,
    after: AfterHandoff,
) -> EffectStatus:
    effect.status = status.value
    session.flush()
    detail = effect.last_error or status.value
    log.warning("effect %s needs a person: %s", effect.id, detail)
    open_handoff(session, effect, reason, detail, now, after)
    return status


def settle_lapsed(
    session: Session, effect: ExternalEffect, now: datetime, after: AfterHandoff
) -> bool:
    """The sweep's part: a worker lost while making an effect may have sent it. Repeating
    a harmless one is safe; any other goes to a person. False when it was not lapsed."""
    if effect.status != EffectStatus.PERFORMING.value or aware(effect.next_attempt_at) > now:
        return False
    effect.updated_at = now
    effect.last_error = "the worker making it was lost; it may have been sent"
    if effect.idempotent:
        effect.status = EffectStatus.PENDING.value
        effect.next_attempt_at = now
        after.effects.append(effect.id)
        return True
    _stuck(session, effect, EffectStatus.OUTCOME_UNKNOWN, HandoffReason.OUTCOME_UNKNOWN, now, after)
    return True
