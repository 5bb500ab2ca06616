"""The embedded environment (SQLite file + in-memory broker) a test runs in, and the same
on PostgreSQL for the tests of write paths the product runs there in production."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, make_url, text

from orchestrator.config.settings import get_settings, reset_settings
from orchestrator.db.migrate import upgrade
from orchestrator.db.models import Base
from orchestrator.testing.reset import reset_process_state
from tests.support.polling import scaled

#: Variables that would point a test at real services; the embedded default unsets them.
LIFECYCLE_VARS = (
    "LIFECYCLE_DATABASE_URL",
    "LIFECYCLE_BROKER_URL",
    "LIFECYCLE_STORAGE_DIR",
    "LIFECYCLE_HOLD_JOB_STEP",
)


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh SQLite database and storage under tmp_path; the broker is in memory."""
    yield from _sqlite(tmp_path, monkeypatch)


@pytest.fixture
def embedded_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The same, SQLite always: for the tests of SQLite's own behaviour (a file held busy)."""
    yield from _sqlite(tmp_path, monkeypatch)


def _sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # The database is in place before the settings name it: a thread an earlier test left
    # behind, opening the new home's database before the copy, would keep an empty one.
    database = tmp_path / "lifecycle.db"
    shutil.copyfile(migrated_sqlite(), database)
    for name in LIFECYCLE_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LIFECYCLE_HOME", str(tmp_path))
    reset_process_state()
    assert make_url(get_settings().resolved_database_url).database == str(database.resolve())
    yield tmp_path
    reset_process_state()


_sqlite_template: dict[str, Path] = {}


def migrated_sqlite() -> Path:
    """One SQLite file per process migrated to head, copied for each test: migrating takes
    a seventh of a second, copying a file a few milliseconds."""
    if "path" not in _sqlite_template:
        folder = Path(tempfile.mkdtemp(prefix="lifecycle-template-"))
        upgrade(f"sqlite:///{folder / 'template.db'}")  # its engine is disposed: no WAL left
        _assert_migrated(folder / "template.db")
        _sqlite_template["path"] = folder / "template.db"
        # Removed at the session's end (drop_template), or at exit where no session ends
        # (a bench drafting through `open_kit`); by this process only, not a forked child.
        atexit.register(_remove_in, os.getpid(), folder)
    return _sqlite_template["path"]


def _remove_in(pid: int, folder: Path) -> None:
    if os.getpid() == pid:
        shutil.rmtree(folder, ignore_errors=True)


def _assert_migrated(database: Path) -> None:
    """Every table is in the file itself, with nothing left in a write-ahead log."""
    leftovers = [p.name for p in database.parent.iterdir() if p.name != database.name]
    with closing(sqlite3.connect(database)) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    missing = sorted(table for table in Base.metadata.tables if table not in tables)
    assert not missing and not leftovers, f"template {database}: {missing=} {leftovers=}"


#: The PostgreSQL server of the integration tier; unset, the embedded tests keep SQLite.
TEST_SERVER = os.environ.get("LIFECYCLE_TEST_DATABASE_URL")
_template: dict[str, str] = {}


def _admin_url() -> str:
    assert TEST_SERVER
    return make_url(TEST_SERVER).set(drivername="postgresql+psycopg").render_as_string(False)


def _migrated_template() -> str:
    """One database per process migrated to head, copied for each test: migrating takes
    seconds, copying a template a fraction of one."""
    if "name" not in _template:
        name = f"lifecycle_tmpl_{uuid.uuid4().hex[:10]}"
        admin = create_engine(_admin_url(), isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        admin.dispose()
        upgrade(make_url(_admin_url()).set(database=name).render_as_string(False))
        _template["name"] = name
    return _template["name"]


@contextmanager
def fresh_postgres() -> Iterator[str]:
    """A database of its own on the test server, at head, dropped afterwards."""
    template = _migrated_template()
    name = f"lifecycle_emb_{uuid.uuid4().hex[:10]}"
    admin = create_engine(_admin_url(), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
    try:
        yield make_url(_admin_url()).set(database=name).render_as_string(False)
    finally:
        reset_process_state()  # its pooled connections, before the database goes
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def drop_template() -> None:
    """At the session's end: the process's template databases."""
    sqlite = _sqlite_template.pop("path", None)
    if sqlite is not None:
        shutil.rmtree(sqlite.parent, ignore_errors=True)
    name = _template.pop("name", None)
    if name is None or not TEST_SERVER:
        return
    admin = create_engine(_admin_url(), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@contextmanager
def embedded_on_postgres(patch: pytest.MonkeyPatch, home: Path) -> Iterator[Path]:
    """The embedded environment (in-memory broker, storage under `home`) with its
    database on the test server when there is one, else the SQLite file."""
    for name in LIFECYCLE_VARS:
        patch.delenv(name, raising=False)
    patch.setenv("LIFECYCLE_HOME", str(home))
    if not TEST_SERVER:
        reset_process_state()
        upgrade()
        yield home
        reset_process_state()
        return
    with fresh_postgres() as url:
        patch.setenv("LIFECYCLE_DATABASE_URL", url)
        reset_process_state()
        yield home
        reset_process_state()


@contextmanager
def api_on_postgres(
    patch: pytest.MonkeyPatch, home: Path, postgres_url: str, **settings: str
) -> Iterator[None]:
    """This process as the API's, without an embedded worker, on the database
    `postgres_url` with its files under `home` (and `settings`: more LIFECYCLE_ variables);
    its state and settings reset on the way in and out."""
    for name in LIFECYCLE_VARS:
        patch.delenv(name, raising=False)
    patch.setenv("LIFECYCLE_DATABASE_URL", postgres_url)
    patch.setenv("LIFECYCLE_HOME", str(home))
    patch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
    for name, value in settings.items():
        patch.setenv(name, value)
    reset_process_state()
    reset_settings()
    try:
        yield
    finally:
        reset_process_state()
        reset_settings()


@contextmanager
def with_a_worker(home: Path) -> Iterator[TestClient]:
    """One environment (`embedded_on_postgres`) with a real Celery worker in this process,
    and a test client of the API and console: stopping a worker costs seconds, so a module
    shares one."""
    from orchestrator.api import app
    from orchestrator.config.settings import reset_settings
    from orchestrator.engine.messages import get_app
    from orchestrator.runtime.embedded import embedded_worker

    with pytest.MonkeyPatch.context() as patch, embedded_on_postgres(patch, home):
        patch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
        reset_settings()
        with embedded_worker(get_app(), concurrency=3):
            yield TestClient(app)
        reset_settings()


def in_a_fresh_process(home: Path, module: str, function: str) -> dict[str, Any]:
    """Run `module.function()` in a fresh Python on the embedded default under `home`, and
    what it printed last, as JSON. For the in-memory broker, whose queues are class-wide:
    a worker another test left in this process could take the messages."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIFECYCLE_")}
    env.update(LIFECYCLE_HOME=str(home), LIFECYCLE_WORKER_PRELOAD="false")
    done = subprocess.run(
        [sys.executable, "-c", f"from {module} import {function}; {function}()"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(180),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return outcome
