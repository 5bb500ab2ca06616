"""Time as a dependency: production reads the system clock, tests move their own."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator

_now: Callable[[], datetime] = lambda: datetime.now(UTC)  # noqa: E731


def utcnow() -> datetime:
    return _now()


def set_clock(now: Callable[[], datetime] | None) -> None:
    """Install a clock (None restores the system clock)."""
    global _now
    _now = now or (lambda: datetime.now(UTC))


def as_utc(value: datetime) -> datetime:
    """A stored time as UTC: SQLite hands back naive datetimes, and every time stored is UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


#: A time read back from the database, in a view: always timezone-aware (UTC).
StoredTime = Annotated[datetime, AfterValidator(as_utc)]
