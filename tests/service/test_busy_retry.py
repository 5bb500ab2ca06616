"""A busy SQLite database is waited out, with backoff, within the busy timeout; past it
the caller hears DatabaseBusy (a 503 problem over HTTP), never a raw OperationalError."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy.exc import OperationalError

from orchestrator.contracts.errors import DatabaseBusy
from orchestrator.db.busy import is_busy, run_when_free


def _locked() -> OperationalError:
    return OperationalError("BEGIN IMMEDIATE", {}, sqlite3.OperationalError("database is locked"))


def test_a_busy_unit_of_work_is_run_again_until_it_succeeds() -> None:
    calls: list[int] = []

    def work() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise _locked()
        return "done"

    assert run_when_free(work, timeout_s=30) == "done"
    assert len(calls) == 3


def test_past_the_busy_timeout_the_caller_hears_database_busy() -> None:
    def work() -> None:
        raise _locked()

    with pytest.raises(DatabaseBusy) as raised:
        run_when_free(work, timeout_s=0)
    assert raised.value.http_status == 503 and raised.value.code == "database_busy"


def test_other_database_errors_are_not_retried() -> None:
    calls: list[int] = []
    other = OperationalError("SELECT", {}, sqlite3.OperationalError("no such table: runs"))

    def work() -> None:
        calls.append(1)
        raise other

    with pytest.raises(OperationalError):
        run_when_free(work, timeout_s=30)
    assert len(calls) == 1 and not is_busy(other) and is_busy(_locked())
