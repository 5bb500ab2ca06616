"""Time as a dependency: production reads the system clock, tests move their own."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

_now: Callable[[], datetime] = lambda: datetime.now(UTC)  # noqa: E731


def utcnow() -> datetime:
    return _now()


def set_clock(now: Callable[[], datetime] | None) -> None:
    """Install a clock (None restores the system clock)."""
    global _now
    _now = now or (lambda: datetime.now(UTC))
