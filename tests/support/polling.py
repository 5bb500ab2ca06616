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
    timeout. `observe` may raise to stop at once (a run that failed, a dead process)."""
    deadline = time.monotonic() + scaled(timeout_s)
    while True:
        value = observe()
        if until(value):
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out waiting for {what or until}; last: {value!r}")
        time.sleep(interval_s)


def wait_for(condition: Callable[[], bool], timeout_s: float = 60, what: str = "") -> None:
    """Poll a condition until it holds (observing state, not racing it)."""
    poll(condition, bool, timeout_s=timeout_s, what=what)
