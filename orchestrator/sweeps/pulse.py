"""The scheduler's pulse: when each sweep beat schedules last started and finished.

Each sweep task records its start and end (one upsert each) as it runs on a worker, so
the health report can tell a live beat from a dead one: a sweep not started within three
of its intervals is overdue, and the newest start is beat's last sweep time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select

from orchestrator.contracts.clock import utcnow
from orchestrator.db.effect_models import SweepRun
from orchestrator.db.session import read_transaction, transaction
from orchestrator.db.sql import aware, insert_for
from orchestrator.engine.schedule import sweep_intervals

#: A sweep this many intervals late means beat (or every worker on its queue) stopped.
OVERDUE_AFTER_INTERVALS = 3


def sweep_started(task: str) -> None:
    now = utcnow()
    with transaction() as session:
        session.execute(
            insert_for(session, SweepRun)
            .values(name=task, runs=1, last_started_at=now)
            .on_conflict_do_update(
                index_elements=["name"],
                set_={"runs": SweepRun.runs + 1, "last_started_at": now},
            )
        )


def sweep_finished(task: str, error: str | None) -> None:
    with transaction() as session:
        row = session.get(SweepRun, task)
        if row is not None:
            row.last_finished_at, row.last_error = utcnow(), error


class SweepPulse(BaseModel):
    model_config = ConfigDict(frozen=True)

    task: str
    every_s: float
    runs: int
    last_started_at: datetime | None
    last_finished_at: datetime | None
    last_error: str | None
    overdue: bool


@dataclass(frozen=True)
class BeatPulse:
    last_sweep_at: datetime | None
    sweeps: tuple[SweepPulse, ...]

    @property
    def overdue(self) -> list[str]:
        return [sweep.task for sweep in self.sweeps if sweep.overdue]


def beat_pulse(now: datetime | None = None) -> BeatPulse:
    now = now or utcnow()
    with read_transaction() as session:
        rows = {row.name: row for row in session.scalars(select(SweepRun))}
    sweeps = []
    for task, every in sorted(sweep_intervals().items()):
        row = rows.get(task)
        started = aware(row.last_started_at) if row is not None else None
        late = started is None or (now - started).total_seconds() > OVERDUE_AFTER_INTERVALS * every
        sweeps.append(
            SweepPulse(
                task=task,
                every_s=every,
                runs=row.runs if row is not None else 0,
                last_started_at=started,
                last_finished_at=aware(row.last_finished_at)
                if row and row.last_finished_at
                else None,
                last_error=row.last_error if row is not None else None,
                overdue=late,
            )
        )
    starts = [sweep.last_started_at for sweep in sweeps if sweep.last_started_at is not None]
    return BeatPulse(max(starts) if starts else None, tuple(sweeps))
