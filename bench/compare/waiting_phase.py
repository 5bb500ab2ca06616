"""Phase 4's rounds: the fleet with and without runs waiting, alternated round by round.

Two fresh fleets are started side by side, each with its own database and broker: one
whose database holds only the rounds' runs, one whose database also holds `count` runs
waiting for approval. Both are as old, have done the same work and have been vacuumed the
same way; their rounds alternate in the order absent, present, present, absent, ... so
that neither the machine's load (which moves rates between minutes more than anything
measured here) nor going first favours one side. The ratio of the medians and each
pair's ratio are reported.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from sqlalchemy.engine import make_url

from bench.compare.fleet import Fleet, FleetOptions
from bench.compare.results import PhaseResult, RoundFigures, round_ratios
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
        return round_ratios(self.present, self.absent)

    @property
    def median_pair_ratio(self) -> float:
        return statistics.median(self.pair_ratios())


def other_broker(url: str, offset: int) -> str:
    """A Redis database `offset` after `url`'s: the fleets' messages never meet."""
    parsed = make_url(url)
    db = int((parsed.database or "0").lstrip("/") or 0)
    return parsed.set(database=str(db + offset)).render_as_string(hide_password=False)


def waiting_rounds(
    options: FleetOptions, count: int, runs: int, repeat: int, idle_s: float
) -> WaitingResult:
    """Two fresh fleets, `count` waiting runs in the second's database, rounds alternated."""
    print(f"waiting runs: two fresh fleets, {count:,} waiting in the second", flush=True)
    with (
        Fleet(replace(options, broker_url=other_broker(options.broker_url, 1))) as absent,
        Fleet(replace(options, broker_url=other_broker(options.broker_url, 2))) as present,
    ):
        rows = 0
        for fleet, copies in ((absent, 0), (present, count)):
            fleet.activate()
            template = template_run()  # both hold one run waiting: only the copies differ
            if copies:
                with transaction() as session:
                    rows = clone_waiting_runs(session, template, copies)
                print(f"  inserted {rows:,} rows", flush=True)
        # VACUUM ANALYZE of each database inside, then the same warm-up round each. The
        # sweeps run in this process: each fleet is activated so they read its database.
        loads = [_load_of(fleet, idle_s) for fleet in (absent, present)]
        for fleet in (absent, present):
            fleet.round(runs, "fleet-waiting-warmup")
        rounds: dict[Fleet, list[RoundFigures]] = {absent: [], present: []}
        for i in range(repeat):
            order = (absent, present) if i % 2 == 0 else (present, absent)
            for fleet in order:
                rounds[fleet].append(fleet.round(runs, f"fleet-waiting-{len(rounds[fleet])}"))
        return WaitingResult(
            count,
            PhaseResult.of("fleet-absent", rounds[absent], absent.peak_rss()),
            PhaseResult.of("fleet-waiting", rounds[present], present.peak_rss()),
            loads[0],
            loads[1],
            rows,
        )


def _load_of(fleet: Fleet, idle_s: float) -> LoadFigures:
    fleet.activate()
    return measure_load(fleet.watch, idle_s)
