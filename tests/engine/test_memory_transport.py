"""The embedded default's in-memory transport waits briefly per drain, so an embedded
worker's loop sees its stop flag at once rather than after Celery's 2-second wait."""

from __future__ import annotations

from typing import Any

import pytest
from kombu.transport.virtual import base as virtual

from orchestrator.config.settings import Settings
from orchestrator.engine import memory_transport
from orchestrator.engine.celery_app import create_app


def test_the_embedded_app_alone_uses_the_short_wait_transport() -> None:
    embedded = create_app(Settings(broker_url="memory://localhost/"))
    with embedded.connection_for_write() as connection:
        assert isinstance(connection.transport, memory_transport.Transport)
        assert connection.transport_cls == memory_transport.SHORT_WAIT
    served = create_app(Settings(broker_url="redis://127.0.0.1:6379/15"))
    assert served.conf.broker_transport is None  # chosen by the URL's scheme, as before


@pytest.mark.parametrize("asked", [2.0, None, 0.05])
def test_one_drain_waits_at_most_the_short_wait(
    monkeypatch: pytest.MonkeyPatch, asked: float | None
) -> None:
    waits: list[float | None] = []

    def drain(self: Any, connection: Any, timeout: float | None = None) -> None:
        waits.append(timeout)
        raise TimeoutError

    monkeypatch.setattr(virtual.Transport, "drain_events", drain)
    app = create_app(Settings(broker_url="memory://localhost/"))
    with app.connection_for_write() as connection, pytest.raises(TimeoutError):
        connection.drain_events(timeout=asked)
    expected = memory_transport.MAX_WAIT_S if asked is None else min(asked, 0.1)
    assert waits == [expected]
