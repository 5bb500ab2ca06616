"""PostgreSQL for the benchmarks: fresh databases, server-side counters, backend CPU."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import psutil
import psycopg
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url

TABLE_COLUMNS = ("seq_scan", "seq_tup_read", "idx_scan", "idx_tup_fetch")
STAT_COLUMNS = (
    "xact_commit",
    "xact_rollback",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "blks_hit",
    "blks_read",
)


def _server(server_url: str) -> Engine:
    url = make_url(server_url).set(drivername="postgresql+psycopg")
    return create_engine(url, isolation_level="AUTOCOMMIT", pool_pre_ping=True)


def fresh_database(server_url: str, prefix: str) -> tuple[str, str]:
    """Create an empty database next to `server_url`'s; returns (url, name)."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    engine = _server(server_url)
    with engine.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    url = make_url(server_url).set(drivername="postgresql+psycopg", database=name)
    return url.render_as_string(hide_password=False), name


def drop_database(server_url: str, name: str) -> None:
    engine = _server(server_url)
    with engine.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    engine.dispose()


@dataclass(frozen=True)
class DbStats:
    """pg_stat_database counters of one database, its user tables' scan counters, and its
    backends' CPU seconds."""

    values: dict[str, int]
    backend_cpu_s: float
    own_reads: int = 0
    """How many reads of its own tables' counters the benchmark had made before this one
    (each is one read-only transaction in the database)."""

    def minus(self, earlier: DbStats) -> DbStats:
        delta = {k: v - earlier.values.get(k, 0) for k, v in self.values.items()}
        delta["xact_commit"] -= self.own_reads - earlier.own_reads
        return DbStats(delta, self.backend_cpu_s - earlier.backend_cpu_s)


class DbWatch:
    """Reads one database's counters: pg_stat_database from a connection to another
    database (so those reads do not count), its user tables' counters over one connection
    of its own (one transaction per read, subtracted from the figures)."""

    def __init__(self, server_url: str, database: str) -> None:
        self.engine = _server(server_url)
        self.database = database
        url = make_url(server_url).set(drivername="postgresql", database=database)
        self.own_url = url.render_as_string(hide_password=False)
        self._own: psycopg.Connection[tuple[int, ...]] | None = None
        self.own_reads = 0

    def _own_connection(self) -> psycopg.Connection[tuple[int, ...]]:
        if self._own is None or self._own.closed:
            self._own = psycopg.connect(self.own_url, autocommit=True)
        return self._own

    def vacuum_analyze(self) -> None:
        """Settle the tables first, so autovacuum does not run during a measurement. Its
        own session ends at once: ending publishes its counters (one per table)."""
        with psycopg.connect(self.own_url, autocommit=True) as connection:
            connection.execute("VACUUM ANALYZE")

    def _read(self) -> dict[str, int]:
        columns = ", ".join(STAT_COLUMNS)
        with self.engine.connect() as connection:
            connection.execute(text("SELECT pg_stat_clear_snapshot()"))
            row = connection.execute(
                text(f"SELECT {columns} FROM pg_stat_database WHERE datname = :d"),
                {"d": self.database},
            ).one()
        return dict(zip(STAT_COLUMNS, (int(v) for v in row), strict=True))

    def _read_tables(self) -> dict[str, int]:
        """The lifecycle's own tables only (catalog lookups of new sessions excluded)."""
        connection = self._own_connection()
        with connection.transaction():
            connection.execute("SELECT pg_stat_clear_snapshot()")
            row = connection.execute(
                "SELECT coalesce(sum(seq_scan), 0), coalesce(sum(seq_tup_read), 0), "
                "coalesce(sum(idx_scan), 0), coalesce(sum(idx_tup_fetch), 0) "
                "FROM pg_stat_user_tables"
            ).fetchone()
        self.own_reads += 1
        assert row is not None
        return dict(zip(TABLE_COLUMNS, (int(v) for v in row), strict=True))

    def flush_backends(self, timeout_s: float = 10.0) -> None:
        """End every other session on the database, so each publishes its counters now (an
        idle backend may hold them for up to 10 s). The fleet's pools ping before use and
        reconnect; the benchmark calls this only while the fleet is idle."""
        own = self._own_connection().info.backend_pid
        with self.engine.connect() as connection:
            connection.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = :d AND pid <> :own"
                ),
                {"d": self.database, "own": own},
            )
        deadline = time.monotonic() + timeout_s
        while set(self.backend_pids()) - {own} and time.monotonic() < deadline:
            time.sleep(0.05)

    def wal_position(self) -> int:
        """The server's WAL insert position, bytes: what every database wrote so far (the
        benchmark's phases never overlap, so a difference is one phase's WAL)."""
        with self.engine.connect() as connection:
            lsn = str(connection.scalar(text("SELECT pg_current_wal_insert_lsn()")))
        high, low = lsn.split("/")
        return (int(high, 16) << 32) | int(low, 16)

    def backend_pids(self) -> list[int]:
        with self.engine.connect() as connection:
            return list(
                connection.scalars(
                    text("SELECT pid FROM pg_stat_activity WHERE datname = :d"),
                    {"d": self.database},
                )
            )

    def backend_cpu_s(self) -> float:
        total = 0.0
        for pid in self.backend_pids():
            try:
                times = psutil.Process(pid).cpu_times()
            except psutil.Error:  # the backend ended between the two reads
                continue
            total += times.user + times.system
        return total

    def settled(self, quiet_s: float = 1.2, timeout_s: float = 4.0) -> DbStats:
        """Counters once they stopped moving: backends publish their counts lazily (about
        once a second when idle), so a read right after activity undercounts it."""
        cpu = self.backend_cpu_s()
        last = self._read()
        stable_since = time.monotonic()
        deadline = stable_since + timeout_s
        while time.monotonic() < deadline:
            time.sleep(0.3)
            current = self._read()
            if current != last:
                last, stable_since = current, time.monotonic()
            elif time.monotonic() - stable_since >= quiet_s:
                break
        reads_before = self.own_reads
        return DbStats({**last, **self._read_tables()}, cpu, reads_before)

    def dispose(self) -> None:
        self.engine.dispose()
        if self._own is not None:
            self._own.close()
