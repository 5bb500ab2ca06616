"""The fair peer's application writes: what the fleet writes per applied signal, written by
the peer in one application transaction inside each of its 20 steps.

Every step locks its run row, checks and bumps its version, and records a step execution and
an audit event; a drafting step adds its artifact row; an answered wait adds its signal-inbox
row with its fate; an approval adds its approval event, consumed, and marks the artifact
approved. The transactions are DBOS datasource transactions: checkpointed by DBOS in the same
transaction, as the fleet's outbox is written in the coordinator's.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from dbos import SQLAlchemyDatasource
from sqlalchemy import text

from orchestrator.contracts.steps import STEP_ORDER, StepKind
from orchestrator.lifecycle.definition import STEP_SPECS

SCHEMA = "bench_app"

TABLES = f"""
CREATE SCHEMA IF NOT EXISTS {SCHEMA};
CREATE TABLE IF NOT EXISTS {SCHEMA}.runs (
    id text PRIMARY KEY, version integer NOT NULL, current_step text NOT NULL,
    status text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS {SCHEMA}.step_executions (
    id bigserial PRIMARY KEY, run_id text NOT NULL REFERENCES {SCHEMA}.runs (id),
    step text NOT NULL, attempt integer NOT NULL, status text NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now(), UNIQUE (run_id, step, attempt));
CREATE TABLE IF NOT EXISTS {SCHEMA}.audit_events (
    id bigserial PRIMARY KEY, run_id text NOT NULL, event_type text NOT NULL,
    context jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX IF NOT EXISTS audit_events_run ON {SCHEMA}.audit_events (run_id);
CREATE TABLE IF NOT EXISTS {SCHEMA}.signal_inbox (
    id bigserial PRIMARY KEY, run_id text NOT NULL, signal_type text NOT NULL,
    idempotency_key text NOT NULL UNIQUE, fate text NOT NULL, reason text,
    received_at timestamptz NOT NULL DEFAULT now(), applied_at timestamptz);
CREATE TABLE IF NOT EXISTS {SCHEMA}.artifacts (
    id bigserial PRIMARY KEY, run_id text NOT NULL, kind text NOT NULL,
    version integer NOT NULL, status text NOT NULL, approved_at timestamptz,
    UNIQUE (run_id, kind, version));
CREATE TABLE IF NOT EXISTS {SCHEMA}.approval_events (
    id bigserial PRIMARY KEY, run_id text NOT NULL, artifact_kind text NOT NULL,
    decision text NOT NULL, consumed boolean NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now());
"""

Write = Callable[[str, int], int]


def _approves() -> dict[str, str]:
    """Each approval wait and the artifact it approves: the last one drafted before it."""
    approves, drafted = {}, ""
    for step in STEP_ORDER:
        spec = STEP_SPECS[step]
        if spec.produces is not None:
            drafted = spec.produces.value
        if spec.kind is StepKind.WAIT_FOR_APPROVAL:
            approves[step.value] = drafted
    return approves


APPROVES = _approves()


def make_writes(datasource: SQLAlchemyDatasource) -> dict[str, Write]:
    """One transaction function per step, named for it (so its checkpoint carries the
    step's name, as the bare peer's steps do)."""
    return {step.value: _make_write(datasource, step.value) for step in STEP_ORDER}


def _make_write(datasource: SQLAlchemyDatasource, name: str) -> Write:
    spec = STEP_SPECS[next(step for step in STEP_ORDER if step.value == name)]
    waits = spec.kind in (StepKind.WAIT_FOR_INPUT, StepKind.WAIT_FOR_APPROVAL)
    first = name == STEP_ORDER[0].value
    produces = spec.produces.value if spec.produces is not None else None
    approves = APPROVES.get(name)

    def write(run_id: str, version: int) -> int:
        session = datasource.sql_session()
        if first:
            session.execute(
                text(
                    f"INSERT INTO {SCHEMA}.runs (id, version, current_step, status) "
                    "VALUES (:id, 0, :step, 'running')"
                ),
                {"id": run_id, "step": name},
            )
        held = session.execute(
            text(f"SELECT version FROM {SCHEMA}.runs WHERE id = :id FOR UPDATE"), {"id": run_id}
        ).scalar_one()
        if held != version:
            raise RuntimeError(f"run {run_id}: version {held}, expected {version}")
        session.execute(
            text(
                f"UPDATE {SCHEMA}.runs SET version = version + 1, current_step = :step, "
                "updated_at = now() WHERE id = :id AND version = :version"
            ),
            {"id": run_id, "step": name, "version": version},
        )
        if waits:
            signal = spec.awaits.value if spec.awaits is not None else name
            session.execute(
                text(
                    f"INSERT INTO {SCHEMA}.signal_inbox (run_id, signal_type, idempotency_key, "
                    "fate, applied_at) VALUES (:id, :signal, :key, 'applied', now())"
                ),
                {"id": run_id, "signal": signal, "key": f"{run_id}:{signal}"},
            )
        if approves is not None:
            session.execute(
                text(
                    f"INSERT INTO {SCHEMA}.approval_events (run_id, artifact_kind, decision, "
                    "consumed) VALUES (:id, :kind, 'approved', true)"
                ),
                {"id": run_id, "kind": approves},
            )
            session.execute(
                text(
                    f"UPDATE {SCHEMA}.artifacts SET status = 'approved', approved_at = now() "
                    "WHERE run_id = :id AND kind = :kind AND status = 'draft'"
                ),
                {"id": run_id, "kind": approves},
            )
        if produces is not None:
            session.execute(
                text(
                    f"INSERT INTO {SCHEMA}.artifacts (run_id, kind, version, status) "
                    "VALUES (:id, :kind, 1, 'draft')"
                ),
                {"id": run_id, "kind": produces},
            )
        session.execute(
            text(
                f"INSERT INTO {SCHEMA}.step_executions (run_id, step, attempt, status) "
                "VALUES (:id, :step, 1, 'completed')"
            ),
            {"id": run_id, "step": name},
        )
        session.execute(
            text(
                f"INSERT INTO {SCHEMA}.audit_events (run_id, event_type, context) "
                "VALUES (:id, 'lifecycle.step.completed', CAST(:context AS jsonb))"
            ),
            {"id": run_id, "context": json.dumps({"step": name, "version": version + 1})},
        )
        return version + 1

    write.__name__ = write.__qualname__ = f"write_{name}"
    return datasource.transaction(name=name, isolation_level="READ COMMITTED")(write)
