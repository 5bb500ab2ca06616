"""Phase 4's rounds: the fleet with and without runs waiting, alternated round by round.

Two fleets run side by side, each with its own database and broker: one whose database
holds only the rounds' runs, one whose database also holds `count` runs waiting for
approval. Their rounds alternate (absent, present, absent, ...), so the machine's load,
which moves rates between minutes more than anything measured here, falls on both alike;
the ratio of the medians and each pair's ratio are what is reported.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from sqlalchemy.engine import make_url

from bench.compare.fleet import Fleet, FleetOptions
from bench.compare.results import PhaseResult, RoundFigures
from bench.compare.waiting import LoadFigures, clone_waiting_runs, measure_load, template_run
from orchestrator.db.session import transaction

#: The ratio of lifecycles/s with the runs waiting to without that the issue sets.
TARGET = 0.95


@dataclass
class WaitingResult:
    count: int
    absent: PhaseResult
    present: PhaseResult
    load_absent: LoadFigures
    load_present: LoadFigures
    rows: int

    @property
    def ratio(self) -> float:
        return self.present.lifecycles_per_s / self.absent.lifecycles_per_s

    def pair_ratios(self) -> list[float]:
        return [
            p.lifecycles_per_s / a.lifecycles_per_s
            for a, p in zip(self.absent.rounds, self.present.rounds, strict=True)
        ]

    @property
    def median_pair_ratio(self) -> float:
        return statistics.median(self.pair_ratios())


def other_broker(url: str) -> str:
    """The next Redis database: the second fleet's messages never meet the first's."""
    parsed = make_url(url)
    db = int((parsed.database or "0").lstrip("/") or 0)
    return parsed.set(database=str(db + 1)).render_as_string(hide_password=False)


def waiting_rounds(
    absent: Fleet, options: FleetOptions, count: int, runs: int, repeat: int, idle_s: float
) -> WaitingResult:
    """Start a second fleet, give its database `count` waiting runs, alternate rounds."""
    print(f"waiting runs: {count:,} in a second fleet's database", flush=True)
    absent.activate()
    load_absent = measure_load(absent.watch, idle_s)
    second = replace(options, broker_url=other_broker(options.broker_url))
    with Fleet(second) as present:
        present.activate()
        template = template_run()
        with transaction() as session:
            rows = clone_waiting_runs(session, template, count)
        print(f"  inserted {rows:,} rows", flush=True)
        load_present = measure_load(present.watch, idle_s)  # VACUUM ANALYZE first
        absent.activate()
        absent.watch.vacuum_analyze()
        present.round(runs, "fleet-waiting-warmup")  # its workers' imports and pools
        pairs: list[tuple[RoundFigures, RoundFigures]] = []
        for i in range(repeat):
            pairs.append(
                (absent.round(runs, f"fleet-absent{i}"), present.round(runs, f"fleet-waiting{i}"))
            )
        present_rss = present.peak_rss()
    absent.activate()
    return WaitingResult(
        count,
        PhaseResult.of("fleet-absent", [a for a, _ in pairs], absent.peak_rss()),
        PhaseResult.of("fleet-waiting", [p for _, p in pairs], present_rss),
        load_absent,
        load_present,
        rows,
    )
