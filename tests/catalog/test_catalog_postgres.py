"""Catalogue import on PostgreSQL: the real workbook and 800-53 catalog, reimport a no-op."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from orchestrator.catalog import registry
from orchestrator.catalog.importer import import_catalog
from orchestrator.catalog.store import CATALOGS, LINKS, read_catalog
from orchestrator.db.migrate import upgrade
from orchestrator.db.session import make_engine

CATALOG_FILES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "catalogs"


@pytest.fixture
def scratch_session(services: tuple[str, str]) -> Iterator[Session]:
    if not CATALOG_FILES.is_dir():
        pytest.skip(
            f"real catalogue files not found at {CATALOG_FILES} (they live beside "
            "the repository, in shared/data, and are never committed)"
        )
    server = make_url(services[0]).set(drivername="postgresql+psycopg")
    name = f"lifecycle_cat_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = server.set(database=name).render_as_string(hide_password=False)
    upgrade(url)
    engine = make_engine(url)
    with Session(engine) as session:
        yield session
    engine.dispose()
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def test_import_and_reimport_on_postgres(scratch_session: Session) -> None:
    session = scratch_session
    workbook = CATALOG_FILES / "scf" / "SCF_2022.3.xlsx"
    first = import_catalog(session, workbook)
    import_catalog(session, CATALOG_FILES / "nist" / "NIST_SP-800-53_rev5.0.1_catalog.json")
    session.commit()
    counts = (
        session.scalar(select(func.count()).select_from(CATALOGS)),
        session.scalar(select(func.count()).select_from(LINKS)),
    )
    again = import_catalog(session, workbook)
    session.commit()
    assert first.created and not again.created
    assert (
        (
            session.scalar(select(func.count()).select_from(CATALOGS)),
            session.scalar(select(func.count()).select_from(LINKS)),
        )
        == counts
        == (2, first.links)
    )
    stored = read_catalog(session, first.info.id)
    assert stored is not None
    assert stored.controls == registry.shipped_catalog().controls
    assert stored.framework("SOC 2") == registry.shipped_catalog().framework("SOC 2")
