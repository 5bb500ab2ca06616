"""Engines and sessions. SQLite gets WAL and write-locking transactions; PostgreSQL a pool."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from orchestrator.config.settings import get_settings


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        return _sqlite_engine(url)
    return create_engine(
        url, pool_pre_ping=True, pool_size=5, max_overflow=5, connect_args=_postgres_options()
    )


def _postgres_options() -> dict[str, Any]:
    """A transaction left idle by a hung thread is ended by the server, not kept forever."""
    idle_s = get_settings().database_idle_transaction_timeout_s
    if not idle_s:
        return {}
    return {"options": f"-c idle_in_transaction_session_timeout={idle_s * 1000}"}


def _sqlite_engine(url: str) -> Engine:
    database = url.split("///", 1)[-1]
    if database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy own transactions, so BEGIN IMMEDIATE below takes the write
        # lock up front: two writers then queue instead of failing on lock upgrade.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


_engines: dict[str, Engine] = {}
_factories: dict[str, sessionmaker[Session]] = {}


def engine_for(url: str) -> Engine:
    """One engine (one pool) per URL per process."""
    engine = _engines.get(url)
    if engine is None:
        engine = _engines[url] = make_engine(url)
    return engine


def get_engine() -> Engine:
    return engine_for(get_settings().resolved_database_url)


def _factory(url: str) -> sessionmaker[Session]:
    factory = _factories.get(url)
    if factory is None:
        factory = _factories[url] = sessionmaker(bind=engine_for(url), expire_on_commit=False)
    return factory


@contextmanager
def transaction() -> Iterator[Session]:
    """One unit of work: commits on success, rolls back on any error."""
    with _factory(get_settings().resolved_database_url)() as session, session.begin():
        yield session


def dispose_engines() -> None:
    """Close every pool (after fork, or when tests switch databases)."""
    for engine in _engines.values():
        engine.dispose()
    _engines.clear()
    _factories.clear()
