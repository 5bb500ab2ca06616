"""A person's read or write waits out a busy SQLite database instead of failing.

SQLite answers "database is locked" (or "busy") when its one write lock stays held past
the connection's busy timeout, and at once in a few cases where waiting cannot help the
statement itself (a read snapshot gone stale under WAL). The whole unit of work is then
run again, after a jittered wait (`contracts.jitter`: threads that met one lock do not
retry it in step), until the busy timeout is spent; only then does the caller hear
`DatabaseBusy`. A unit that failed this way rolled back, so running it again is safe.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from sqlalchemy.exc import OperationalError

from orchestrator.config.settings import get_settings
from orchestrator.contracts.errors import DatabaseBusy
from orchestrator.contracts.jitter import full_jitter

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

_BUSY = ("database is locked", "database is busy", "database table is locked")
FIRST_BACKOFF_S = 0.02
LONGEST_BACKOFF_S = 1.0


def is_busy(error: BaseException) -> bool:
    """SQLite's busy or locked error, as SQLAlchemy raises it."""
    if not isinstance(error, OperationalError):
        return False
    text = str(error.orig if error.orig is not None else error).lower()
    return any(marker in text for marker in _BUSY)


def run_when_free(
    work: Callable[[], T],
    *,
    timeout_s: float | None = None,
    rng: random.Random | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run `work`, again after each busy error, until it succeeds or the time is spent."""
    budget = get_settings().database_busy_timeout_s if timeout_s is None else timeout_s
    deadline = time.monotonic() + budget
    attempts = 0
    while True:
        attempts += 1
        try:
            return work()
        except OperationalError as error:
            if not is_busy(error):
                raise
            left = deadline - time.monotonic()
            if left <= 0:
                raise DatabaseBusy(
                    f"the database stayed busy for {budget:g} s ({attempts} attempts); "
                    "nothing was stored: try again",
                ) from error
            log.info("database busy (attempt %d); trying again", attempts)
            wait = full_jitter(FIRST_BACKOFF_S, attempts - 1, LONGEST_BACKOFF_S, rng)
            sleep(min(wait, left))


def retry_busy(function: Callable[P, T]) -> Callable[P, T]:
    """Decorate a unit of work (one or more whole transactions) with `run_when_free`."""

    @functools.wraps(function)
    def retried(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_when_free(lambda: function(*args, **kwargs))

    return retried
