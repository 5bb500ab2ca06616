"""Waiting in tests: one polling loop, and one time scale for every wait.

LIFECYCLE_TEST_TIME_SCALE (default 1) multiplies every timeout, so a loaded machine gets
more time without any test changing. A wait observes state until it holds; it never
sleeps in place of a condition.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: The longest pause between two observations of a state that is not moving: observing
#: costs CPU (an HTTP request, a query) that the process under test, often in the same
#: interpreter, would rather have.
MAX_INTERVAL_S = 0.25
TIME_SCALE = float(os.environ.get("LIFECYCLE_TEST_TIME_SCALE", "1"))


def scaled(seconds: float) -> float:
    """A test's timeout on this machine."""
    return seconds * TIME_SCALE


def poll(
    observe: Callable[[], T],
    until: Callable[[T], bool],
    *,
    timeout_s: float = 60,
    what: str = "",
    interval_s: float = 0.05,
) -> T:
    """Call `observe` (which may also act, as a reviewer answering a wait does) until
    `until` holds for what it returned; fail with the last observation after the scaled
    timeout. `observe` may raise to stop at once (a run that failed, a dead process).

    The pause starts at `interval_s` and grows while the observation stays the same (up
    to `MAX_INTERVAL_S`); an observation that changed starts it again from `interval_s`."""
    deadline = time.monotonic() + scaled(timeout_s)
    pause = interval_s
    last: object = _NOTHING
    while True:
        value = observe()
        if until(value):
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out waiting for {what or until}; last: {value!r}")
        pause = _next_pause(pause, interval_s, moved=not _same(value, last))
        last = value
        time.sleep(pause)


_NOTHING = object()


def _same(value: object, last: object) -> bool:
    try:
        return bool(value == last)
    except Exception:  # an observation that cannot be compared counts as a change
        return False


def _next_pause(pause: float, interval_s: float, *, moved: bool) -> float:
    if moved:
        return interval_s
    return max(interval_s, min(pause * 1.5, MAX_INTERVAL_S))


def wait_for(condition: Callable[[], bool], timeout_s: float = 60, what: str = "") -> None:
    """Poll a condition until it holds (observing state, not racing it)."""
    poll(condition, bool, timeout_s=timeout_s, what=what)
