"""Retry waits with full jitter: each wait drawn uniformly between zero and the doubling
cap. Retriers that failed together (threads on one SQLite lock, deliveries to one endpoint
that went down, jobs of one outage) then spread out instead of retrying in step."""

from __future__ import annotations

import random

#: One generator per process; a test passes its own, seeded, to get the same waits.
_SHARED = random.Random()


def capped_doubling(base_s: float, attempt: int, cap_s: float) -> float:
    """The wait without jitter: base, 2·base, 4·base, … (attempt counts from 0), at most cap."""
    return min(base_s * 2 ** max(attempt, 0), cap_s)


def full_jitter(
    base_s: float, attempt: int, cap_s: float, rng: random.Random | None = None
) -> float:
    return (rng or _SHARED).uniform(0.0, capped_doubling(base_s, attempt, cap_s))
