"""Sweep tests: the embedded database (SQLite) and a clock the test moves."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.engine.messages import get_app
from tests.support.sweeps import Clock, installed_clock


@pytest.fixture
def clock(embedded: Path) -> Iterator[Clock]:
    yield from installed_clock()


@pytest.fixture
def queued_messages(embedded: Path) -> Iterator[object]:
    """How many messages wait in a queue of the in-memory broker (nothing consumes them)."""
    app = get_app()
    with app.connection_for_write() as connection:
        channel = connection.default_channel

        def count(queue: str) -> int:
            channel.queue_declare(queue=queue, durable=True)
            return int(channel._size(queue))  # the memory transport's own queue length

        yield count
