"""Two sign-outs of one console session at once (two tabs, a double click) both end it:
on PostgreSQL the second waits on the first's uncommitted row and then finds it there,
instead of failing on the duplicate key (a 500)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, create_engine, insert, text

from orchestrator.contracts.clock import utcnow
from orchestrator.db.apikey_models import EndedConsoleSession
from orchestrator.service.console_sessions import end_session, session_ended
from orchestrator.testing.reset import reset_process_state
from tests.support.polling import wait_for


@pytest.fixture
def on_postgres(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("LIFECYCLE_DATABASE_URL", postgres_url)
    reset_process_state()
    yield postgres_url
    reset_process_state()


def test_two_sign_outs_of_one_session_at_once_both_succeed(on_postgres: str) -> None:
    session_id = uuid.uuid4().hex
    expires = time.time() + 3600
    failures: list[BaseException] = []

    def second_sign_out() -> None:
        try:
            end_session(session_id, expires)
        except BaseException as error:  # noqa: BLE001 (reported by the test below)
            failures.append(error)

    engine = create_engine(on_postgres)
    try:
        with engine.connect() as first:
            ending = first.begin()
            first.execute(
                insert(EndedConsoleSession).values(
                    session_id=session_id,
                    ended_at=utcnow(),
                    expires_at=datetime.now(UTC) + timedelta(hours=1),
                )
            )
            other = threading.Thread(target=second_sign_out)
            other.start()
            wait_for(
                lambda: not other.is_alive() or _waiting_on_a_lock(engine) > 0,
                what="the second sign-out waiting on the first's row",
            )
            ending.commit()
        other.join(timeout=30)
    finally:
        engine.dispose()
    assert not other.is_alive()
    assert failures == []
    assert session_ended(session_id)


def _waiting_on_a_lock(engine: Engine) -> int:
    # A connection of its own each time: pg_stat_activity is a snapshot per transaction.
    query = text(
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    with engine.connect() as watcher:
        return int(watcher.execute(query).scalar_one())
