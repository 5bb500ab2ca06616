"""Wake runs whose inbox holds signals still pending after the grace period.

A lost "coordinate" message loses no signal: the signal waits in the inbox and this
sweep wakes its run. Two sources, each reading only what is due:

1. First kicks: a time-window cursor over pending signals (by `received_at`) finds the
   ones that crossed the grace period since the last sweep.
2. Repeat kicks: a signal can stay pending on purpose (early, or its run is blocked), or
   the kick itself can be lost again. Each woken run has an `inbox_rekicks` row with a
   doubling backoff; the rows whose time came are read by `next_at`, and a run with
   nothing pending any more loses its row.

Two sweeps at once: the rekick row records the newest signal it was kicked for (a
guarded upsert), and repeat kicks lock their rows with SKIP LOCKED.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.config.sweep_registry import sweep
from orchestrator.config.sweeps import SweepSettings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.jitter import full_jitter
from orchestrator.db.models import InboxSignal
from orchestrator.db.ops_models import PENDING_FATE, InboxRekick
from orchestrator.db.session import transaction
from orchestrator.db.sql import insert_for
from orchestrator.sweeps.cursors import move_cursor, open_window, read_window
from orchestrator.sweeps.sweep_actions import SweepMessages


@sweep("inbox")
def rekick_pending_runs(grace: timedelta | None = None) -> int:
    settings = get_settings().sweeps
    now = utcnow()
    cutoff = now - (settings.grace if grace is None else grace)
    after = SweepMessages()
    with transaction() as session:
        _first_kicks(session, cutoff, now, settings, after)
        _repeat_kicks(session, now, settings, after)
    after.send()
    return len(after.kicks)


def _first_kicks(
    session: Session, cutoff: datetime, now: datetime, settings: SweepSettings, after: SweepMessages
) -> None:
    window = open_window(session, "inbox", cutoff)
    query = select(InboxSignal.run_id).where(PENDING_FATE)
    rows, position = read_window(
        session, query, window, InboxSignal.received_at, InboxSignal.id, int, settings.batch
    )
    newest: dict[uuid.UUID, int] = {}
    for run_id, _, signal_id in rows:
        newest[run_id] = max(signal_id, newest.get(run_id, 0))
    # One order for every sweep: two sweeps never wait on each other's rows in a cycle.
    for run_id in sorted(newest):
        if _kick_for_signal(session, run_id, newest[run_id], now, settings):
            after.kicks.add(run_id)
    move_cursor(session, window, position, now)


def _kick_for_signal(
    session: Session, run_id: uuid.UUID, signal_id: int, now: datetime, settings: SweepSettings
) -> bool:
    """Only the first sweep to see this signal (or a newer one) for the run kicks it."""
    values = {
        "kicks": 1,
        "kicked_at": now,
        "next_at": now + _backoff(1, settings),
        "last_signal_id": signal_id,
    }
    statement = (
        insert_for(session, InboxRekick)
        .values(run_id=run_id, **values)
        .on_conflict_do_update(
            index_elements=["run_id"], set_=values, where=InboxRekick.last_signal_id < signal_id
        )
        .returning(InboxRekick.run_id)
    )
    return session.execute(statement).scalar() is not None


def _repeat_kicks(
    session: Session, now: datetime, settings: SweepSettings, after: SweepMessages
) -> None:
    due = session.scalars(
        select(InboxRekick)
        .where(InboxRekick.next_at <= now)
        .order_by(InboxRekick.next_at, InboxRekick.run_id)
        .limit(settings.batch)
        .with_for_update(skip_locked=True)
    )
    for rekick in due:
        if rekick.run_id in after.kicks:
            continue
        if not _has_pending(session, rekick.run_id):
            session.delete(rekick)
            continue
        rekick.kicks += 1
        rekick.kicked_at, rekick.next_at = now, now + _backoff(rekick.kicks, settings)
        after.kicks.add(rekick.run_id)


def _has_pending(session: Session, run_id: uuid.UUID) -> bool:
    return (
        session.scalar(
            select(InboxSignal.id).where(InboxSignal.run_id == run_id, PENDING_FATE).limit(1)
        )
        is not None
    )


def _backoff(kicks: int, settings: SweepSettings) -> timedelta:
    return timedelta(seconds=full_jitter(settings.grace_s, kicks, settings.rekick_backoff_max_s))
