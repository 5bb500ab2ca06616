"""Catalogue figures: reading and importing the SCF workbook and the SP 800-53 catalog, the
database space they take, and how interactive `framework show` and scope drafting stay for
the largest framework.

    python -m bench.catalog_import [--database-url URL] [--data DIR]

Without --database-url a fresh SQLite file in a temporary directory is used; with a
PostgreSQL server URL a scratch database is created there and dropped afterwards.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from bench.record import add_record_flag, record_if_asked

T = TypeVar("T")
DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "catalogs"
TABLES = (
    "catalogs",
    "catalog_controls",
    "frameworks",
    "framework_requirements",
    "requirement_links",
)


#: Every step's seconds, in the order timed (what --record keeps).
TIMED: dict[str, float] = {}


def timed(label: str, action: Callable[[], T]) -> T:
    began = time.perf_counter()
    result = action()
    TIMED[label] = time.perf_counter() - began
    print(f"  {label:<52} {TIMED[label]:8.2f} s")
    return result


@contextmanager
def database(url: str | None) -> Iterator[str]:
    if url is None or url.startswith("sqlite"):
        with tempfile.TemporaryDirectory() as folder:
            yield url or f"sqlite:///{folder}/bench.db"
        return
    server = make_url(url).set(drivername="postgresql+psycopg")
    name = f"bench_catalog_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def size_mb(url: str) -> float:
    engine = create_engine(url)
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = connection.exec_driver_sql("PRAGMA page_count").scalar() or 0
            page = connection.exec_driver_sql("PRAGMA page_size").scalar() or 0
            total = int(pages) * int(page)
        else:
            total = sum(
                int(connection.execute(text(f"SELECT pg_total_relation_size('{t}')")).scalar() or 0)
                for t in TABLES
            )
    engine.dispose()
    return total / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    add_record_flag(parser)
    args = parser.parse_args()
    workbook = args.data / "scf" / "SCF_2022.3.xlsx"
    nist = args.data / "nist" / "NIST_SP-800-53_rev5.0.1_catalog.json"
    moderate = args.data / "nist" / "NIST_SP-800-53_rev5_MODERATE-baseline_profile.json"
    with tempfile.TemporaryDirectory() as home, database(args.database_url) as url:
        os.environ["LIFECYCLE_HOME"] = home
        os.environ["LIFECYCLE_DATABASE_URL"] = url
        run(url, workbook, nist, moderate)
    record_if_asked(args, "catalog_import", [(label, s, "s") for label, s in TIMED.items()])


def run(url: str, workbook: Path, nist: Path, moderate: Path) -> None:
    from orchestrator.catalog import registry
    from orchestrator.catalog.matching import resolve
    from orchestrator.catalog.scf_workbook import read_scf_workbook
    from orchestrator.catalog.scoping import draft_scope
    from orchestrator.catalog.service import import_file, show_framework
    from orchestrator.db.migrate import upgrade
    from orchestrator.db.session import transaction

    upgrade(url)
    print(f"database: {make_url(url).get_backend_name()}")
    base = size_mb(url)
    parsed = timed("read the SCF workbook (calamine)", lambda: read_scf_workbook(workbook))
    print(
        f"    {len(parsed.controls)} controls, {len(parsed.mapping_columns)} mapping columns, "
        f"{len(parsed.links)} links"
    )
    result = timed("import the SCF workbook", lambda: import_file(workbook))
    scf_size = size_mb(url)
    print(
        f"    {result.frameworks} frameworks, {result.requirements} requirements, "
        f"{result.links} links; database +{scf_size - base:.1f} MB"
    )
    timed("import it again (no-op)", lambda: import_file(workbook))
    result = timed("import the SP 800-53 rev5 catalog (OSCAL)", lambda: import_file(nist))
    nist_size = size_mb(url)
    print(
        f"    {result.controls} controls, {result.requirements} requirements; "
        f"database +{nist_size - scf_size:.1f} MB"
    )
    timed("import the MODERATE baseline profile", lambda: import_file(moderate))
    print(f"  database size after the imports: {size_mb(url):.1f} MB")

    with transaction() as session:
        registry.forget_loaded()
        catalogs = timed(
            "load the current catalogues (cold cache)", lambda: registry.pinned(session, None)
        )
    scf = next(c for c in catalogs if c.info.kind == "scf_workbook")
    largest = max(
        (f for f in scf.frameworks if f.kind == "scf_mapping"), key=lambda f: len(f.requirements)
    )
    print(f"  largest crosswalk: {largest.name} ({len(largest.requirements)} requirements)")
    registry.forget_loaded()
    timed(f"framework show {largest.name!r} (cold)", lambda: show_framework(largest.name))
    timed(f"framework show {largest.name!r} (warm)", lambda: show_framework(largest.name))
    timed("framework show 'SCF' (1090 requirements, warm)", lambda: show_framework("SCF"))
    for name in (largest.name, "SCF", "NIST SP 800-53 rev5 Moderate"):
        choice = resolve(catalogs, name)
        assert choice is not None
        scope = timed(
            f"draft the scope for {name!r}", functools.partial(draft_scope, catalogs, [choice])
        )
        print(
            f"    {scope['summary']['requirements']} requirement rows, "
            f"{scope['summary']['controls_in_scope']} SCF controls"
        )


if __name__ == "__main__":
    main()
