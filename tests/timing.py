"""How long tests wait: every wait is a base time times one setting.

LIFECYCLE_TEST_TIME_SCALE (default 1) stretches every deadline and time limit a test
sets, so a loaded machine gets more time without editing tests. Waits poll for a
condition and return as soon as it holds; the scale only moves when they give up.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

SCALE_ENV = "LIFECYCLE_TEST_TIME_SCALE"


def time_scale() -> float:
    raw = os.environ.get(SCALE_ENV, "1")
    try:
        scale = float(raw)
    except ValueError:
        raise ValueError(f"{SCALE_ENV} must be a number, not {raw!r}") from None
    if scale <= 0:
        raise ValueError(f"{SCALE_ENV} must be positive, not {raw!r}")
    return scale


def scaled(seconds: float) -> float:
    """A test's time limit on this machine."""
    return seconds * time_scale()


def wait_for(condition: Callable[[], bool], timeout_s: float = 60, what: str = "",
             interval_s: float = 0.05) -> None:
    """Poll until `condition()` holds; give up after the scaled `timeout_s`."""
    limit = scaled(timeout_s)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {limit:g} s waiting for {what or condition}")
