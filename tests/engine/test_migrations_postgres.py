"""On PostgreSQL the migrations run down and up again and match the models."""

from __future__ import annotations

import importlib
import uuid
from collections.abc import Iterator

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from orchestrator.db.migrate import downgrade, upgrade
from orchestrator.db.models import Base
from tests.engine.test_migrations import MODEL_MODULES


@pytest.fixture
def scratch_url(services: tuple[str, str]) -> Iterator[str]:
    server = make_url(services[0]).set(drivername="postgresql+psycopg")
    name = f"lifecycle_mig_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    yield server.set(database=name).render_as_string(hide_password=False)
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def test_postgres_migrations_are_reversible_and_match_the_models(scratch_url: str) -> None:
    for module in MODEL_MODULES:
        importlib.import_module(module)
    upgrade(scratch_url)
    downgrade(scratch_url)
    engine = create_engine(scratch_url)
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    upgrade(scratch_url)
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    engine.dispose()
    assert differences == []


def test_the_inbox_and_outbox_keep_room_on_each_page_as_the_models_declare(
    scratch_url: str,
) -> None:
    """Their rows are updated once on an indexed column: fillfactor 70 keeps that update on
    the row's own (recent) page instead of an old one the free-space map offers."""
    upgrade(scratch_url)
    declared = {
        name: Base.metadata.tables[name].dialect_options["postgresql"]["with"]
        for name in ("signal_inbox", "outbox")
    }
    engine = create_engine(scratch_url)
    with engine.connect() as connection:
        options: dict[str, list[str] | None] = dict(
            connection.execute(
                text(
                    "SELECT relname, reloptions FROM pg_class "
                    "WHERE relname IN ('signal_inbox', 'outbox', 'audit_events')"
                )
            ).all()
        )
    engine.dispose()
    assert declared == {"signal_inbox": {"fillfactor": 70}, "outbox": {"fillfactor": 70}}
    assert options == {
        "signal_inbox": ["fillfactor=70"],
        "outbox": ["fillfactor=70"],
        "audit_events": None,
    }
    downgrade(scratch_url, "0014")
    engine = create_engine(scratch_url)
    with engine.connect() as connection:
        reset = connection.execute(
            text("SELECT reloptions FROM pg_class WHERE relname = 'signal_inbox'")
        ).scalar()
    engine.dispose()
    assert reset is None
