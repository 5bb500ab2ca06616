"""A private Redis server as the fleet's broker, for tests that restart or flush it.

Import both fixtures into a test module (`from tests.support.private_broker import
broker_url, private_redis`): its fleet then uses this server, never the shared one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.private_services import PrivateRedis


@pytest.fixture
def private_redis(services: tuple[str, str], tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def broker_url(private_redis: PrivateRedis) -> str:
    """This test's fleet uses the private server (overrides the shared test broker)."""
    return private_redis.url
