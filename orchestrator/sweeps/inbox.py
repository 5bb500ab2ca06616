"""Wake runs whose inbox holds signals still pending after the grace period.

A lost "coordinate" message loses no signal: the signal waits in the inbox and this
sweep wakes its run. Signals can also stay pending on purpose (early, or the run is
blocked); such runs are woken again with a doubling backoff, not at every sweep. The
guarded upsert of the run's rekick row decides which of two sweeps sends the kick.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import false, func, or_, select
from sqlalchemy.orm import Session

from orchestrator.clock import utcnow
from orchestrator.db.models import InboxSignal
from orchestrator.db.ops_models import PENDING_FATE, InboxRekick
from orchestrator.db.session import transaction
from orchestrator.sweeps.effects import AfterCommit
from orchestrator.sweeps.settings import SweepSettings, sweep_settings
from orchestrator.sweeps.sql import aware, insert_for


def rekick_pending_runs(grace: timedelta | None = None) -> int:
    settings = sweep_settings()
    now = utcnow()
    cutoff = now - (settings.grace if grace is None else grace)
    after = AfterCommit()
    with transaction() as session:
        for run_id, newest, kicked_at, kicks in _due_runs(session, cutoff, now, settings):
            fresh = kicked_at is None or aware(newest) > aware(kicked_at)
            count = 1 if fresh else kicks + 1
            if _claim_kick(session, run_id, kicked_at, count, now, settings):
                after.kicks.add(run_id)
    after.send()
    return len(after.kicks)


def _due_runs(session: Session, cutoff: datetime, now: datetime,
              settings: SweepSettings) -> list[Any]:
    """Runs with a pending signal older than `cutoff` that are not backing off, or that
    received a signal since they were last woken."""
    newest = func.max(InboxSignal.received_at)
    return list(session.execute(
        select(InboxSignal.run_id, newest, InboxRekick.kicked_at, InboxRekick.kicks)
        .outerjoin(InboxRekick, InboxRekick.run_id == InboxSignal.run_id)
        .where(PENDING_FATE, InboxSignal.received_at < cutoff)
        .group_by(InboxSignal.run_id, InboxRekick.kicked_at, InboxRekick.kicks,
                  InboxRekick.next_at)
        .having(or_(InboxRekick.kicked_at.is_(None), InboxRekick.next_at <= now,
                    newest > InboxRekick.kicked_at))
        # One order for every sweep: two sweeps then never wait on each other's rows.
        .order_by(InboxSignal.run_id).limit(settings.batch)).all())


def _claim_kick(session: Session, run_id: uuid.UUID, seen_kicked_at: datetime | None,
                kicks: int, now: datetime, settings: SweepSettings) -> bool:
    """Insert or move the run's rekick row only from the state this sweep read."""
    backoff = min(settings.grace_s * 2 ** kicks, settings.rekick_backoff_max_s)
    values = {"kicks": kicks, "kicked_at": now, "next_at": now + timedelta(seconds=backoff)}
    statement = insert_for(session, InboxRekick).values(run_id=run_id, **values)
    statement = statement.on_conflict_do_update(
        index_elements=["run_id"], set_=values,
        where=InboxRekick.kicked_at == seen_kicked_at if seen_kicked_at else false())
    return session.execute(statement.returning(InboxRekick.run_id)).scalar() is not None
