"""Counts SQL statements and transactions in one process (LIFECYCLE_BENCH_COUNT_SQL=1).

Installed on SQLAlchemy's Engine class, so every engine of the process is counted
(the fleet's pools, DBOS's system database). A daemon thread writes the totals to
`$LIFECYCLE_BENCH_COUNT_DIR/<role>-<pid>.json` every 50 ms, so the benchmark reads
deltas around a round without stopping the process.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.engine.default import DefaultDialect

ENABLED_ENV = "LIFECYCLE_BENCH_COUNT_SQL"
DIR_ENV = "LIFECYCLE_BENCH_COUNT_DIR"
ROLE_ENV = "LIFECYCLE_BENCH_ROLE"
_WRITE_EVERY_S = 0.25
_WRITES = ("INSERT", "UPDATE", "DELETE")
#: A row lock, or a data-modifying statement inside a WITH.
_WRITE_ANYWHERE = re.compile(r"\bFOR (?:NO KEY )?UPDATE\b|\(\s*(?:INSERT|UPDATE|DELETE)\b")

_lock = threading.Lock()
_local = threading.local()
_totals: Counter[str] = Counter()
_statements: Counter[str] = Counter()
_installed = False


@lru_cache(maxsize=4096)  # SQLAlchemy re-sends the same few statement strings
def _shape(statement: str) -> str:
    """A statement's shape: bound-parameter lists collapsed, whitespace squeezed."""
    text = re.sub(r"\s+", " ", statement).strip()
    text = re.sub(
        r"\(%\(\w+\)s(?:::\w+(?:\[\])?)?(?:, %\(\w+\)s(?:::\w+(?:\[\])?)?)*\)", "(...)", text
    )
    return text[:160]


def count(key: str, statement: str | None = None) -> None:
    scope = getattr(_local, "scope", None)
    shape = _shape(statement) if statement is not None else None
    with _lock:
        _totals[key] += 1
        if scope is not None:
            _totals[f"{scope}.{key}"] += 1
        if shape is not None:
            _statements[f"{scope}: {shape}" if scope else shape] += 1


@contextmanager
def scope(name: str) -> Iterator[None]:
    """Also count what this thread does meanwhile under `name.<key>` (e.g. the SQL of one
    coordinator call, in whichever process it runs)."""
    previous = getattr(_local, "scope", None)
    _local.scope = name
    try:
        yield
    finally:
        _local.scope = previous


def _on_statement(conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
    count("statements", statement)
    wrote = statement.lstrip()[:6].upper() in _WRITES or bool(_WRITE_ANYWHERE.search(statement))
    if _autocommit(conn):
        # Its own transaction, committed by the server (counted here, not at the no-op
        # commit or rollback the connection sends the driver when it is closed).
        count("write_commits" if wrote else "commits")
    elif wrote:
        conn.info["bench_wrote"] = True


def _autocommit(conn: Any) -> bool:
    return bool(conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT")


def _on_commit(conn: Any) -> None:
    # A transaction that wrote (or locked) waits for its WAL flush at commit: on a slow
    # disk that, not the statement count, is what a commit costs.
    if _autocommit(conn):
        return
    count("write_commits" if conn.info.pop("bench_wrote", False) else "commits")


def _on_rollback(conn: Any) -> None:
    conn.info.pop("bench_wrote", None)
    if not _autocommit(conn):
        count("rollbacks")


def _counting_ping(original: Any) -> Any:
    def do_ping(self: DefaultDialect, dbapi_connection: Any) -> bool:
        # pool_pre_ping's SELECT 1 bypasses the cursor events; it is still a round trip.
        count("pings")
        return bool(original(self, dbapi_connection))

    return do_ping


def snapshot() -> dict[str, Any]:
    with _lock:
        return {"pid": os.getpid(), "totals": dict(_totals), "statements": dict(_statements)}


def _writer(path: Path) -> None:
    last: dict[str, int] | None = None
    while True:
        with _lock:
            current = dict(_totals)
        if current != last:
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(snapshot()))
            tmp.replace(path)
            last = current
        threading.Event().wait(_WRITE_EVERY_S)


def install_if_enabled() -> bool:
    """Install the listeners and the writer thread when the environment asks for them."""
    global _installed
    if _installed or os.environ.get(ENABLED_ENV) != "1":
        return _installed
    event.listen(Engine, "before_cursor_execute", _on_statement)
    event.listen(Engine, "commit", _on_commit)
    event.listen(Engine, "rollback", _on_rollback)
    DefaultDialect.do_ping = _counting_ping(DefaultDialect.do_ping)  # type: ignore[method-assign]
    out = Path(os.environ.get(DIR_ENV) or tempfile.mkdtemp(prefix="sqlcount-"))
    out.mkdir(parents=True, exist_ok=True)
    role = os.environ.get(ROLE_ENV, "process")
    path = out / f"{role}-{os.getpid()}.json"
    threading.Thread(target=_writer, args=(path,), daemon=True, name="sqlcount").start()
    _installed = True
    return True


class PublishLog:
    """When this process handed each message to the broker: `task_id<TAB>unix time` lines
    appended to `publish-<role>-<pid>.tsv` (read back to time dispatches)."""

    def __init__(self) -> None:
        self._file: Any = None
        self._lock = threading.Lock()

    def record(self, task_id: str) -> None:
        line = f"{task_id}\t{time.time():.6f}\n"
        with self._lock:
            if self._file is None:
                directory = Path(os.environ.get(DIR_ENV) or tempfile.gettempdir())
                role = os.environ.get(ROLE_ENV, "process")
                self._file = (directory / f"publish-{role}-{os.getpid()}.tsv").open("a")
            self._file.write(line)
            self._file.flush()


def read_publishes(directory: Path) -> dict[str, float]:
    """task id -> unix time of its publish, over every process that logged some."""
    published: dict[str, float] = {}
    for path in directory.glob("publish-*.tsv"):
        for line in path.read_text().splitlines():
            task_id, _, at = line.partition("\t")
            if at:
                published[task_id] = float(at)
    return published


def read_counts(directory: Path, role: str) -> dict[str, Any]:
    """Sum of every process of `role` written so far: totals and statement shapes."""
    totals: Counter[str] = Counter()
    statements: Counter[str] = Counter()
    for path in directory.glob(f"{role}-*.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):  # replaced mid-read: the next read sees it whole
            continue
        totals.update(data["totals"])
        statements.update(data["statements"])
    return {"totals": totals, "statements": statements}
