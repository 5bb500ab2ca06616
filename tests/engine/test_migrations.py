"""Alembic migrations: one line of history, reversible, and equal to the models."""

from __future__ import annotations

import importlib
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect

from orchestrator.db.migrate import alembic_config, downgrade, upgrade
from orchestrator.db.models import Base

MODEL_MODULES = (
    "orchestrator.db.apikey_models",
    "orchestrator.db.ops_models",
    "orchestrator.db.catalog_models",
    "orchestrator.db.role_models",
    "orchestrator.db.ingestion_models",
    "orchestrator.db.report_models",
    "orchestrator.db.judgement_models",
    "orchestrator.db.effect_models",
    "orchestrator.db.review_models",
    "orchestrator.db.continuous_models",
    "orchestrator.db.batch_models",
    "orchestrator.db.roster_models",
    "orchestrator.db.risk_models",
    "orchestrator.db.oidc_models",
)


def test_history_is_one_line_with_one_head() -> None:
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert len(script.get_heads()) == 1
    revisions = list(script.walk_revisions())
    assert all(len(r._all_down_revisions) <= 1 for r in revisions)


def test_upgrade_downgrade_upgrade_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    upgrade(url)
    tables = set(inspect(create_engine(url)).get_table_names())
    assert {"workflow_runs", "signal_inbox", "outbox", "audit_events", "jobs"} <= tables
    downgrade(url)
    assert set(inspect(create_engine(url)).get_table_names()) <= {"alembic_version"}
    upgrade(url)
    assert set(inspect(create_engine(url)).get_table_names()) == tables


def test_migrations_create_exactly_what_the_models_declare(tmp_path: Path) -> None:
    for module in MODEL_MODULES:
        importlib.import_module(module)
    url = f"sqlite:///{tmp_path / 'diff.db'}"
    upgrade(url)
    with create_engine(url).connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert differences == []


def test_events_recorded_before_role_grants_carry_the_role_they_named(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'roles.db'}"
    upgrade(url, "0006")
    engine = create_engine(url)
    at = "'2026-01-01 00:00:00'"
    with engine.begin() as connection:
        for statement in (
            "INSERT INTO assessments (id, tenant_id, organization_id, name, status, "
            f"created_by, created_at) VALUES ('x', 't', 'o', 'n', 'open', 'u', {at})",
            "INSERT INTO workflow_runs (id, assessment_id, tenant_id, organization_id, status, "
            "context, version, trace_id, started_by, start_idempotency_key, "
            "start_request_hash, created_at, updated_at) VALUES ('r', 'x', 't', 'o', "
            f"'running', '{{}}', 1, 'tr', 'u', 'k', 'h', {at}, {at})",
            "INSERT INTO artifacts (id, tenant_id, assessment_id, run_id, kind, version, "
            "status, content, media_type, sha256, created_by_job_id, created_at) VALUES "
            f"('f', 't', 'x', 'r', 'soa', 1, 'draft', '{{}}', 'application/json', 's', 'j', {at})",
            "INSERT INTO approval_events (id, tenant_id, organization_id, assessment_id, "
            "run_id, artifact_id, artifact_kind, artifact_version, approver_id, "
            "approver_role, decision, created_at) VALUES ('a', 't', 'o', 'x', 'r', 'f', "
            f"'soa', 1, 'user:a', 'ciso', 'approved', {at})",
        ):
            connection.exec_driver_sql(statement)
    upgrade(url)
    with engine.connect() as connection:
        row = connection.exec_driver_sql(
            "SELECT approver_role, approver_roles FROM approval_events"
        ).one()
    assert (row[0], row[1]) == ("ciso", '["ciso"]')
    downgrade(url, "0006")
    with engine.connect() as connection:
        assert (
            connection.exec_driver_sql("SELECT approver_role FROM approval_events").scalar()
            == "ciso"
        )
