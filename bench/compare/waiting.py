"""Phase 4: runs waiting on approvals cost nothing while they wait.

A real run is driven to its SoA approval wait; its rows (assessment, run, steps, jobs,
signals, outbox, audit events, artifacts) are then copied 10,000 times in one INSERT ...
SELECT per table, each copy with its own ids and its times moved back by up to 22 hours
(younger than the first reminder, 24 h); its ids are UUIDv7 of its moved-back creation, as
the product's would be. The database load is then measured with the
copies absent and present: over an idle interval of the running fleet, over one cycle of
every beat sweep, and under the fleet's throughput rounds (run by compare.py).
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from bench.compare import sqlcount
from bench.compare.db import DbStats, DbWatch
from bench.compare.driver import WaitAnswerer, create_assessments, new_owner, start_runs
from bench.compare.results import transactions
from orchestrator.config.sweep_registry import SWEEPS as DECLARED
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.runtime import registrations  # noqa: F401 (the sweeps' functions)
from orchestrator.service.read_models import RunView

#: What `celery beat` runs (beat_schedule.py), in one cycle.
SWEEPS: dict[str, Callable[[], Any]] = {sweep.name: sweep.function() for sweep in DECLARED}
#: Per table: how its rows of the template run are found.
CLONED = {
    "assessments": "id = :assessment",
    "workflow_runs": "id = :run",
    "step_executions": "run_id = :run",
    "jobs": "run_id = :run",
    "signal_inbox": "run_id = :run",
    "outbox": "run_id = :run",
    "audit_events": "run_id = :run",
    "artifacts": "run_id = :run",
}
MAX_AGE_S = 22 * 3600


class _TemplateAnswerer(WaitAnswerer):
    """Answers documents and the framework, never an approval."""

    def _answer(self, run: RunView) -> bool:
        if run.current_step in (
            Step.WAIT_FOR_DOCUMENTS.value,
            Step.WAIT_FOR_FRAMEWORK_SELECTION.value,
        ):
            return super()._answer(run)
        return False


def template_run(timeout_s: float = 120) -> uuid.UUID:
    """A real run of the fleet, left waiting for its SoA approval."""
    owner = new_owner("waiting")
    run_id = start_runs(owner, create_assessments(owner, 1))[0]
    answerer = _TemplateAnswerer(owner)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answerer.poll()
        with transaction() as session:
            run = session.get(WorkflowRun, run_id)
            assert run is not None
            if (run.status, run.current_step) == (
                "waiting_for_approval",
                Step.WAIT_FOR_SOA_APPROVAL.value,
            ):
                return run_id
        time.sleep(0.02)
    raise TimeoutError("the template run did not reach its SoA approval wait")


def _uuid7_at(moment: str) -> str:
    """SQL for a UUIDv7 of `moment` (orchestrator.contracts.ids makes the product's ids so):
    the copies' ids sort before the rounds' runs as real older runs' would."""
    millis = f"substring(int8send(floor(extract(epoch FROM {moment}) * 1000)::bigint) FROM 3)"
    random = "uuid_send(gen_random_uuid())"
    stamped = f"overlay({random} PLACING {millis} FROM 1 FOR 6)"
    return f"encode(set_byte({stamped}, 6, 112 | (get_byte({random}, 6) & 15)), 'hex')::uuid"


def _column_expression(table: str, column: str, data_type: str) -> str:
    uuid_ids = {
        ("assessments", "id"): "m.assessment_id",
        ("workflow_runs", "id"): "m.run_id",
        ("artifacts", "id"): _uuid7_at("now() - m.age"),
    }
    if (table, column) in uuid_ids:
        return uuid_ids[(table, column)]
    if column == "run_id":
        return "m.run_id"
    if column in ("assessment_id", "active_assessment_id"):
        return "m.assessment_id"
    if column == "signal_id":
        return _uuid7_at("now() - m.age")
    if (table, column) in {
        ("jobs", "id"),
        ("outbox", "task_id"),
        ("workflow_runs", "start_idempotency_key"),
        ("artifacts", "created_by_job_id"),
    }:
        return f"t.{column} || ':' || m.n"
    if data_type == "timestamp with time zone":
        return f"t.{column} - m.age"
    return f"t.{column}"


def clone_waiting_runs(session: Session, template: uuid.UUID, count: int) -> int:
    """Copy the template run `count` times; returns the rows inserted."""
    assessment = session.scalar(select(WorkflowRun.assessment_id).where(WorkflowRun.id == template))
    session.execute(
        text(
            "CREATE TEMP TABLE clone_map ON COMMIT DROP AS SELECT n, "
            f"{_uuid7_at('now() - age')} AS run_id, {_uuid7_at('now() - age')} AS assessment_id, "
            "age FROM (SELECT n, make_interval(secs => n * :step) AS age "
            "FROM generate_series(1, :count) AS n) AS ages"
        ),
        {"count": count, "step": MAX_AGE_S / count},
    )
    inserted = 0
    for table, where in CLONED.items():
        columns = session.execute(
            text(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = :t AND table_schema = current_schema() "
                "AND coalesce(column_default, '') NOT LIKE 'nextval%' AND is_identity = 'NO' "
                "ORDER BY ordinal_position"
            ),
            {"t": table},
        ).all()
        names = ", ".join(f'"{c}"' for c, _ in columns)
        values = ", ".join(_column_expression(table, c, d) for c, d in columns)
        result = session.execute(
            text(
                f"INSERT INTO {table} ({names}) SELECT {values} FROM {table} t CROSS JOIN "
                f"clone_map m WHERE t.{where}"
            ),
            {"run": template, "assessment": assessment},
        )
        inserted += result.rowcount  # type: ignore[attr-defined]
    return inserted


@dataclass
class SweepCost:
    wall_ms: float
    statements: int
    transactions: int
    database_cpu_ms: float


@dataclass
class LoadFigures:
    """Database load over an idle interval and over one beat cycle."""

    idle_s: float
    idle: DbStats
    cycle: DbStats
    sweeps: dict[str, SweepCost] = field(default_factory=dict)


def _measure_sweep(watch: DbWatch, sweep: Callable[[], Any]) -> SweepCost:
    sql, cpu = Counter(sqlcount.snapshot()["totals"]), watch.backend_cpu_s()
    began = time.perf_counter()
    sweep()
    wall = time.perf_counter() - began
    delta = Counter(sqlcount.snapshot()["totals"]) - sql
    return SweepCost(
        1000 * wall, delta["statements"], transactions(delta), 1000 * (watch.backend_cpu_s() - cpu)
    )


def measure_load(watch: DbWatch, idle_s: float) -> LoadFigures:
    """Idle interval, then one beat cycle (after a warm-up cycle that places the cursors)."""
    watch.vacuum_analyze()
    watch.flush_backends()
    start = watch.settled()
    time.sleep(idle_s)
    idle_end = watch.settled()
    for sweep in SWEEPS.values():
        sweep()
    watch.flush_backends()
    before = watch.settled()
    costs = {name: _measure_sweep(watch, sweep) for name, sweep in SWEEPS.items()}
    watch.flush_backends()
    after = watch.settled()
    return LoadFigures(idle_s, idle_end.minus(start), after.minus(before), costs)
