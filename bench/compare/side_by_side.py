"""The fleet's and the peers' rounds alternated, so the machine's speed weighs on both.

This machine's speed drifts during a run (the floor's CPU per hop moved from 39 to 62 ms
between two runs of the same code an hour apart): systems measured one after the other
can differ by the drift, not by what they do. Here each round of the fleet is followed by
a round of each peer, the order rotating from round to round, and the rates are compared
round by round as well as by their medians.

The systems stay up while the others run. An idle fleet takes no CPU (its workers block
on the broker); an idle peer's workers poll their queue table every `--peer-queue-poll-ms`,
a little CPU taken from whichever system runs, the fleet's rounds most (both peers idle).
Stopping the idle processes (SIGSTOP) was tried and dropped: in the one full run with it,
a fair-peer round took 31.5 s beside two of 4.3 and 4.4 s, a stall never seen without it
(its cause was not found).
"""

from __future__ import annotations

from typing import Protocol

from bench.compare.procs import peak_rss_of
from bench.compare.results import PhaseResult, RoundFigures


class System(Protocol):
    def round(self, runs: int, label: str) -> RoundFigures: ...

    def pids(self) -> dict[str, int]: ...


def alternate(
    systems: dict[str, System], runs: int, repeat: int, warmup: int
) -> dict[str, PhaseResult]:
    """`warmup` uncounted rounds, then `repeat` counted ones, of every system in turn."""
    names = list(systems)
    rounds: dict[str, list[RoundFigures]] = {name: [] for name in names}
    for i in range(warmup + repeat):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            label = f"{name}-warmup{i}" if i < warmup else f"{name}{i - warmup}"
            figures = systems[name].round(runs, label)
            if i >= warmup:
                rounds[name].append(figures)
    return {
        name: PhaseResult.of(name, rounds[name], peak_rss_of(systems[name].pids()))
        for name in names
    }
