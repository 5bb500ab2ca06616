"""Engines and sessions. SQLite gets WAL and write-locking transactions; PostgreSQL a pool."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from orchestrator.settings import get_settings


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        return _sqlite_engine(url)
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)


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


@lru_cache(maxsize=4)
def engine_for(url: str) -> Engine:
    return make_engine(url)


def get_engine() -> Engine:
    return engine_for(get_settings().resolved_database_url)


@lru_cache(maxsize=4)
def _factory(url: str) -> sessionmaker[Session]:
    return sessionmaker(bind=engine_for(url), expire_on_commit=False)


@contextmanager
def transaction() -> Iterator[Session]:
    """One unit of work: commits on success, rolls back on any error."""
    factory = _factory(get_settings().resolved_database_url)
    with factory() as session, session.begin():
        yield session


def reset_caches() -> None:
    """Forget engines and settings (tests switch databases between cases)."""
    for url in list(_engines_in_use()):
        engine_for(url).dispose()
    engine_for.cache_clear()
    _factory.cache_clear()
    get_settings.cache_clear()


def _engines_in_use() -> list[str]:
    return [] if engine_for.cache_info().currsize == 0 else [get_settings().resolved_database_url]
