"""Decide a new signal against the run as it stands, so an invalid one fails fast.

Only a rejection is final here: the coordinator decides everything else under the run's
lock, because the run may move before it gets there.
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.signals import SignalEnvelope, SignalFate
from orchestrator.db.models import InboxSignal
from orchestrator.engine.coordinator import approval_seen_by
from orchestrator.engine.effect_rows import EffectWriter
from orchestrator.engine.inbox import Recorded
from orchestrator.engine.run_rows import RunRow, state_of
from orchestrator.lifecycle.decide import decide


def reject_if_invalid(
    session: Session, run: RunRow, envelope: SignalEnvelope, recorded: Recorded
) -> Recorded:
    decision = decide(state_of(run), envelope, approval_seen_by(session, envelope))
    if decision.fate is not SignalFate.REJECTED:
        return recorded
    now = utcnow()
    inbox = session.query(InboxSignal).filter_by(signal_id=envelope.signal_id).one()
    inbox.fate, inbox.reason, inbox.decided_at = SignalFate.REJECTED.value, decision.reason, now
    writer = EffectWriter(session=session, run=run, now=now)
    for effect in decision.effects:  # a rejection only records its own audit event
        writer.apply(effect, envelope.trace_id, envelope.signal_id)
    writer.flush()
    return replace(recorded, fate=SignalFate.REJECTED, reason=decision.reason)
