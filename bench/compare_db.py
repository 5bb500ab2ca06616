"""PostgreSQL for the benchmarks: fresh databases, server-side counters, backend CPU."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import psutil
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url

STAT_COLUMNS = ("xact_commit", "xact_rollback", "tup_returned", "tup_fetched",
                "tup_inserted", "tup_updated", "tup_deleted", "blks_hit", "blks_read")


def _server(server_url: str) -> Engine:
    url = make_url(server_url).set(drivername="postgresql+psycopg")
    return create_engine(url, isolation_level="AUTOCOMMIT")


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
    """pg_stat_database counters of one database, plus its backends' CPU seconds."""

    values: dict[str, int]
    backend_cpu_s: float

    def minus(self, earlier: DbStats) -> DbStats:
        return DbStats({k: v - earlier.values.get(k, 0) for k, v in self.values.items()},
                       self.backend_cpu_s - earlier.backend_cpu_s)


class DbWatch:
    """Reads one database's counters from a connection to another database, so the
    reads themselves do not count."""

    def __init__(self, server_url: str, database: str) -> None:
        self.engine = _server(server_url)
        self.database = database
        self.own = _server(make_url(server_url).set(database=database)
                           .render_as_string(hide_password=False))

    def vacuum_analyze(self) -> None:
        """Settle the tables first, so autovacuum does not run during a measurement."""
        with self.own.connect() as connection:
            connection.execute(text("VACUUM ANALYZE"))

    def _read(self) -> dict[str, int]:
        columns = ", ".join(STAT_COLUMNS)
        with self.engine.connect() as connection:
            connection.execute(text("SELECT pg_stat_clear_snapshot()"))
            row = connection.execute(text(
                f"SELECT {columns} FROM pg_stat_database WHERE datname = :d"),
                {"d": self.database}).one()
        return dict(zip(STAT_COLUMNS, (int(v) for v in row), strict=True))

    def backend_pids(self) -> list[int]:
        with self.engine.connect() as connection:
            return list(connection.scalars(text(
                "SELECT pid FROM pg_stat_activity WHERE datname = :d"), {"d": self.database}))

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
        return DbStats(last, cpu)

    def dispose(self) -> None:
        self.engine.dispose()
        self.own.dispose()
