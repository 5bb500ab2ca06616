"""Engines and sessions. SQLite gets WAL, write-locking write transactions and deferred read
transactions; PostgreSQL a pool."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import sqlalchemy
from sqlalchemy import Engine, event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from orchestrator.config.settings import get_settings


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        return _sqlite_engine(url)
    # Looked up when called: tracing (observability.tracing) wraps sqlalchemy.create_engine.
    return sqlalchemy.create_engine(
        url, pool_pre_ping=True, pool_size=5, max_overflow=5, connect_args=_postgres_options()
    )


def _postgres_options() -> dict[str, Any]:
    """A transaction left idle by a hung thread is ended by the server, not kept forever;
    a peer gone silent (a host cut off the network) is given up on both sides."""
    settings = get_settings()
    server: dict[str, int] = {}
    client: dict[str, Any] = {}
    if settings.database_idle_transaction_timeout_s:
        server["idle_in_transaction_session_timeout"] = (
            settings.database_idle_transaction_timeout_s * 1000
        )
    if dead_s := settings.database_dead_peer_s:
        # Half the time idle, then three probes: silence for dead_s ends the connection.
        probes = {"idle": max(1, dead_s // 2), "interval": max(1, dead_s // 6), "count": 3}
        server |= {f"tcp_keepalives_{name}": value for name, value in probes.items()}
        server["tcp_user_timeout"] = dead_s * 1000
        client = {f"keepalives_{name}": value for name, value in probes.items()}
        client |= {"keepalives": 1, "tcp_user_timeout": dead_s * 1000, "connect_timeout": dead_s}
    if server:
        client["options"] = " ".join(f"-c {name}={value}" for name, value in server.items())
    return client


def _sqlite_engine(url: str) -> Engine:
    database = url.split("///", 1)[-1]
    if database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    busy_s = get_settings().database_busy_timeout_s
    engine = sqlalchemy.create_engine(
        url, connect_args={"timeout": busy_s, "check_same_thread": False}
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy own transactions, so BEGIN IMMEDIATE below takes the write
        # lock up front: two writers then queue instead of failing on lock upgrade.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_s * 1000)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # A read takes no lock at all: under WAL a deferred transaction reads its snapshot
        # while a writer holds the write lock, so it never waits for one.
        if is_read_only(connection):
            connection.exec_driver_sql("BEGIN")
        else:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


#: The execution option that marks a connection's transactions as reads.
READ_ONLY = "lifecycle_read_only"


def is_read_only(connection: Any) -> bool:
    return bool(connection.get_execution_options().get(READ_ONLY))


_engines: dict[str, Engine] = {}
_factories: dict[tuple[str, bool], sessionmaker[Session]] = {}


def engine_for(url: str) -> Engine:
    """One engine (one pool) per URL per process."""
    engine = _engines.get(url)
    if engine is None:
        engine = _engines[url] = make_engine(url)
    return engine


def get_engine() -> Engine:
    return engine_for(get_settings().resolved_database_url)


def _factory(url: str, *, read_only: bool = False) -> sessionmaker[Session]:
    factory = _factories.get((url, read_only))
    if factory is None:
        engine = engine_for(url)
        if read_only:
            options: dict[str, Any] = {READ_ONLY: True}
            if engine.dialect.name == "postgresql":
                options["postgresql_readonly"] = True
            engine = engine.execution_options(**options)
        factory = _factories[(url, read_only)] = sessionmaker(bind=engine, expire_on_commit=False)
    return factory


@contextmanager
def transaction() -> Iterator[Session]:
    """One unit of work: commits on success, rolls back on any error. On SQLite it takes
    the database's write lock when it begins (BEGIN IMMEDIATE): use it to write."""
    with _factory(get_settings().resolved_database_url)() as session, session.begin():
        yield session


@contextmanager
def read_transaction() -> Iterator[Session]:
    """A transaction that only reads: on SQLite a deferred BEGIN, which under WAL neither
    takes nor waits for the write lock; on PostgreSQL a READ ONLY transaction.

    Inside `one_read()` it is that block's one read transaction (joined, not begun anew)."""
    shared = _shared_read.get()
    if shared is not None:
        try:
            yield shared.session()
        except DBAPIError:
            shared.close()  # a retry (`retry_busy`) or what follows begins a new one
            raise
        return
    url = get_settings().resolved_database_url
    with _factory(url, read_only=True)() as session, session.begin():
        yield session


class SharedRead:
    """The one read transaction of a `one_read()` block: begun by the block's first read,
    ended (rolled back: it only read) when the block ends."""

    def __init__(self) -> None:
        self._session: Session | None = None
        self._lock = threading.Lock()
        self.begun = 0
        """How many transactions it began (0 or 1), for the tests."""

    def session(self) -> Session:
        with self._lock:
            if self._session is None:
                url = get_settings().resolved_database_url
                self._session = _factory(url, read_only=True)()
                self._session.begin()
                self.begun += 1
            return self._session

    def close(self) -> None:
        with self._lock:
            session, self._session = self._session, None
        if session is not None:
            session.close()


_shared_read: ContextVar[SharedRead | None] = ContextVar("lifecycle_shared_read", default=None)


@contextmanager
def one_read() -> Iterator[SharedRead]:
    """Every `read_transaction()` in this block, in this thread or in the threads this
    context is copied into (a request's dependencies, then its handler, one after the
    other), reads in one read transaction: one snapshot, one BEGIN. For a page that only
    reads; a write (`transaction()`) inside still opens its own transaction. Its threads
    must take turns: a Session is not for concurrent use. Already inside one, joins it."""
    joined = _shared_read.get()
    if joined is not None:
        yield joined
        return
    shared = SharedRead()
    token = _shared_read.set(shared)
    try:
        yield shared
    finally:
        _shared_read.reset(token)
        shared.close()


def dispose_engines() -> None:
    """Close every pool (after fork, or when tests switch databases)."""
    for engine in _engines.values():
        engine.dispose()
    _engines.clear()
    _factories.clear()
