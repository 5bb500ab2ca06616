"""What each phase measured, and the figures the table shows (medians, percentiles)."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass
class RoundFigures:
    lifecycles: int
    transitions: int
    elapsed_s: float
    latencies_ms: list[float]
    """Completion of one job -> dispatch of the next (floor: one Celery hop)."""
    messages: int = 0
    signals: int = 0
    """Applied signals (peer: step completions and messages received, the same events)."""
    orchestrator_sql: Counter[str] = field(default_factory=Counter)
    """Statements, commits, rollbacks, pings of the processes that orchestrate."""
    all_sql: Counter[str] = field(default_factory=Counter)
    """The same over every process that touched the database, the driver included."""
    statements: Counter[str] = field(default_factory=Counter)
    """Orchestrator statements by shape."""
    worker_cpu_s: float = 0.0
    driver_cpu_s: float = 0.0
    database_cpu_s: float = 0.0
    broker_cpu_s: float = 0.0
    """redis-server, the broker of the floor and the fleet (the peer has none)."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def lifecycles_per_s(self) -> float:
        return self.lifecycles / self.elapsed_s

    @property
    def transitions_per_s(self) -> float:
        return self.transitions / self.elapsed_s


def round_ratios(numerator: PhaseResult, denominator: PhaseResult) -> list[float]:
    """Lifecycles/s of one phase over another's, round by round (rounds run in pairs)."""
    return [
        n.lifecycles_per_s / d.lifecycles_per_s
        for n, d in zip(numerator.rounds, denominator.rounds, strict=True)
    ]


def transactions(counts: Counter[str]) -> int:
    return counts["commits"] + counts["write_commits"] + counts["rollbacks"]


@dataclass
class PhaseResult:
    name: str
    rounds: list[RoundFigures]
    peak_rss_mb: dict[str, float]
    units_per_lifecycle: int = 20
    notes: list[str] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        name: str,
        rounds: list[RoundFigures],
        rss: dict[str, float],
        units_per_lifecycle: int = 20,
    ) -> PhaseResult:
        return cls(name, rounds, rss, units_per_lifecycle)

    @property
    def lifecycles_per_s(self) -> float:
        return statistics.median(r.lifecycles_per_s for r in self.rounds)

    @property
    def transitions_per_s(self) -> float:
        return statistics.median(r.transitions_per_s for r in self.rounds)

    @property
    def latencies_ms(self) -> list[float]:
        return [v for r in self.rounds for v in r.latencies_ms]

    def latency_ms(self, q: float) -> float:
        return percentile(self.latencies_ms, q)

    def extra_ms(self, key: str, q: float) -> float:
        """A percentile of a latency list some rounds keep in `extra`."""
        return percentile([v for r in self.rounds for v in r.extra.get(key, [])], q)

    def _sum(self, attribute: str) -> Counter[str]:
        total: Counter[str] = Counter()
        for r in self.rounds:
            total.update(getattr(r, attribute))
        return total

    @property
    def signals(self) -> int:
        return sum(r.signals for r in self.rounds)

    def per_signal(self, what: str, scope: str = "orchestrator_sql") -> float:
        """Per applied signal: transactions ('tx'), writing transactions ('wtx'),
        statements ('stmt')."""
        if not self.signals:
            return math.nan
        counts = self._sum(scope)
        value = {
            "tx": transactions(counts),
            "wtx": counts["write_commits"],
            "stmt": counts["statements"],
        }[what]
        return value / self.signals

    def top_statements(self, limit: int = 12) -> list[tuple[str, float]]:
        if not self.signals:
            return []
        shapes = self._sum("statements")
        return [(shape, n / self.signals) for shape, n in shapes.most_common(limit)]

    def cpu_ms_per_lifecycle(self, attribute: str) -> float:
        lifecycles = sum(r.lifecycles for r in self.rounds)
        return 1000 * sum(getattr(r, attribute) for r in self.rounds) / lifecycles

    def extra_per_lifecycle(self, key: str) -> float:
        """A count some rounds keep in `extra` (the fleet's WAL bytes), per lifecycle."""
        lifecycles = sum(r.lifecycles for r in self.rounds if key in r.extra)
        total = sum(r.extra[key] for r in self.rounds if key in r.extra)
        return total / lifecycles if lifecycles else math.nan

    @property
    def max_rss_mb(self) -> float:
        return max(self.peak_rss_mb.values()) if self.peak_rss_mb else math.nan
