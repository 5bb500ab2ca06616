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

MODEL_MODULES = ("orchestrator.db.apikey_models", "orchestrator.db.ops_models",
                 "orchestrator.db.catalog_models",
                 "orchestrator.db.ingestion_models", "orchestrator.db.report_models")


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
