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
