"""The fleet's and the peers' rounds alternated, so the machine's speed weighs on both.

This machine's speed drifts during a run (the floor's CPU per hop moved from 39 to 62 ms
between two runs of the same code an hour apart): systems measured one after the other
can differ by the drift, not by what they do. Here each round of the fleet is followed by
a round of each peer, the order rotating from round to round, and the rates are compared
round by round as well as by their medians.

While one system runs, the others' worker processes are stopped (SIGSTOP, then SIGCONT):
the peers' workers poll their queue table when idle, which would otherwise take CPU from
the round being measured. No round is measured while a system is stopped mid-work: every
round ends with its lifecycles finished and its trailing wake-ups done.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from bench.compare.procs import peak_rss_mb
from bench.compare.results import PhaseResult, RoundFigures


class System(Protocol):
    def round(self, runs: int, label: str) -> RoundFigures: ...

    def pids(self) -> dict[str, int]: ...


@contextmanager
def stopped(pids: list[int]) -> Iterator[None]:
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def alternate(
    systems: dict[str, System], runs: int, repeat: int, warmup: int
) -> dict[str, PhaseResult]:
    """`warmup` uncounted rounds, then `repeat` counted ones, of every system in turn."""
    names = list(systems)
    rounds: dict[str, list[RoundFigures]] = {name: [] for name in names}
    for i in range(warmup + repeat):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            others = [pid for other in names if other != name for pid in _pids(systems[other])]
            label = f"{name}-warmup{i}" if i < warmup else f"{name}{i - warmup}"
            with stopped(others):
                figures = systems[name].round(runs, label)
            if i >= warmup:
                rounds[name].append(figures)
    return {name: PhaseResult.of(name, rounds[name], _peak_rss(systems[name])) for name in names}


def _pids(system: System) -> list[int]:
    return list(system.pids().values())


def _peak_rss(system: System) -> dict[str, float]:
    return {role: peak_rss_mb(pid) for role, pid in system.pids().items()}
