"""Every retry waits a jittered, doubling time: two retriers that failed together (threads
on one SQLite lock, deliveries to one endpoint, jobs of one outage, runs the rekick sweep
wakes) do not retry in step. Deterministic: seeded generators, recorded waits, no sleeps."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from itertools import accumulate

from sqlalchemy.exc import OperationalError

from orchestrator.config.backoff import RetryBackoff
from orchestrator.config.sweeps import SweepSettings
from orchestrator.contracts.jitter import capped_doubling, full_jitter
from orchestrator.db.busy import FIRST_BACKOFF_S, LONGEST_BACKOFF_S, run_when_free
from orchestrator.runtime.tasks import coordinate

FAILURES = 8


def _busy_waits(seed: int) -> list[float]:
    """The waits one retrier of a locked SQLite database sleeps before it gets through."""
    waits: list[float] = []
    calls = 0

    def work() -> str:
        nonlocal calls
        calls += 1
        if calls <= FAILURES:
            raise OperationalError("BEGIN", {}, sqlite3.OperationalError("database is locked"))
        return "done"

    assert run_when_free(work, timeout_s=60, rng=random.Random(seed), sleep=waits.append) == "done"
    return waits


def _apart(first: list[float], second: list[float]) -> None:
    """Two retriers' retry moments (the sums of their waits) never coincide."""
    assert len(first) == len(second) == FAILURES
    moments = list(zip(accumulate(first), accumulate(second), strict=True))
    assert all(abs(a - b) > 1e-6 for a, b in moments), moments
    assert first != second


def test_two_threads_on_one_sqlite_lock_do_not_retry_in_step() -> None:
    one, other = _busy_waits(1), _busy_waits(2)
    _apart(one, other)
    for attempt, wait in enumerate(one):
        assert 0 <= wait <= capped_doubling(FIRST_BACKOFF_S, attempt, LONGEST_BACKOFF_S)
    assert _busy_waits(1) == one, "seeded: the same waits again"


def test_webhook_deliveries_and_effects_retry_apart_within_the_doubling_cap() -> None:
    policy = RetryBackoff(backoff_base_s=30, backoff_max_s=3600)

    def waits(rng: random.Random) -> list[float]:
        return [policy.backoff(n, rng).total_seconds() for n in range(1, FAILURES + 1)]

    one, other = waits(random.Random(1)), waits(random.Random(2))
    _apart(one, other)
    for attempts, wait in enumerate(one, start=1):
        assert 0 <= wait <= min(30 * 2 ** (attempts - 1), 3600)


def test_jobs_and_rekicks_draw_from_the_same_full_jitter() -> None:
    sweeps = SweepSettings()
    draw: Callable[[random.Random], list[float]] = lambda rng: [  # noqa: E731
        full_jitter(sweeps.grace_s, kicks, sweeps.rekick_backoff_max_s, rng)
        for kicks in range(FAILURES)
    ]
    _apart(draw(random.Random(1)), draw(random.Random(2)))
    # The waits spread over the whole range, not around the cap: full jitter.
    waits = [full_jitter(2, 10, 30, random.Random(seed)) for seed in range(200)]
    assert min(waits) < 3 and max(waits) > 27


def test_the_coordinator_task_retries_with_celery_jitter() -> None:
    assert coordinate.retry_backoff and coordinate.retry_jitter
