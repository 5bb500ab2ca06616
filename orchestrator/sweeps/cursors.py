"""Time-window cursors: a sweep reads only rows whose time crossed its threshold since the
previous sweep, so it costs what became due, not what exists.

A row is keyed by (time, id). The cursor keeps the last key read; a sweep reads the keys
after it up to `end`, in order, at most `batch` of them. Two sweeps reading the same window
is harmless: effects are guarded by markers, and the cursor moves only by a guarded UPDATE.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, and_, or_, update
from sqlalchemy.orm import InstrumentedAttribute, Session

from orchestrator.db.ops_models import SweepCursor
from orchestrator.db.sql import aware, insert_for

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Position:
    at: datetime
    last_id: str = ""
    """Empty: every row at `at` was read. Otherwise the id of the last row read at `at`."""


@dataclass(frozen=True)
class Window:
    name: str
    start: Position
    end: datetime


def open_window(session: Session, name: str, end: datetime) -> Window:
    cursor = session.get(SweepCursor, name)
    start = Position(aware(cursor.position), cursor.position_id) if cursor else Position(EPOCH)
    return Window(name, start, end)


def read_window(
    session: Session,
    query: Select[*tuple[Any, ...]],
    window: Window,
    at: InstrumentedAttribute[Any],
    row_id: InstrumentedAttribute[Any],
    parse_id: Callable[[str], Any],
    batch: int,
) -> tuple[Sequence[Any], Position]:
    """The window's next rows (ordered by time, id) and where the cursor goes after them."""
    start = window.start
    after: Any = at > start.at
    if start.last_id:
        after = or_(after, and_(at == start.at, row_id > parse_id(start.last_id)))
    rows = session.execute(
        query.add_columns(at, row_id)
        .where(after, at <= window.end)
        .order_by(at, row_id)
        .limit(batch)
    ).all()
    if len(rows) < batch:
        return rows, Position(window.end)
    last = rows[-1]
    return rows, Position(aware(last[-2]), str(last[-1]))


def move_cursor(session: Session, window: Window, to: Position, now: datetime) -> bool:
    """Guarded: only moves from where this sweep found it. False: another sweep moved it."""
    if session.get(SweepCursor, window.name) is None:
        statement = (
            insert_for(session, SweepCursor)
            .values(name=window.name, position=to.at, position_id=to.last_id, updated_at=now)
            .on_conflict_do_nothing(index_elements=["name"])
            .returning(SweepCursor.name)
        )
        return session.execute(statement).scalar() is not None
    result = session.execute(
        update(SweepCursor)
        .where(
            SweepCursor.name == window.name,
            SweepCursor.position == window.start.at,
            SweepCursor.position_id == window.start.last_id,
        )
        .values(position=to.at, position_id=to.last_id, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]
