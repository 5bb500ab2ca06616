"""The Redis transport reuses one client per channel, and still delivers every message."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from kombu import Connection, Exchange, Queue

from orchestrator.config.settings import Settings
from orchestrator.engine import redis_transport
from orchestrator.engine.broker_topology import is_amqp
from orchestrator.engine.celery_app import create_app


@pytest.fixture
def redis_url(services: tuple[str, str]) -> str:
    if is_amqp(services[1]):
        pytest.skip("the test broker is RabbitMQ")
    return services[1]


@pytest.fixture
def clients_made(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    made: list[Any] = []
    original = redis.Redis.__init__

    def counting(self: redis.Redis, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(redis.Redis, "__init__", counting)
    yield made


def _round_trip(url: str, count: int) -> list[int]:
    """Publish `count` messages to a fresh queue, then take and ack each: their bodies."""
    name = f"transport-{uuid.uuid4().hex[:8]}"
    queue = Queue(name, Exchange(name), routing_key=name)
    received: list[int] = []
    with Connection(url) as connection:
        producer = connection.Producer(serializer="json")
        for n in range(count):
            producer.publish({"n": n}, exchange=queue.exchange, routing_key=name, declare=[queue])
        with connection.SimpleQueue(queue) as simple:
            for _ in range(count):
                message = simple.get(timeout=10)
                received.append(message.payload["n"])
                message.ack()
            simple.queue.delete()
    return received


def test_a_channel_publishes_takes_and_acks_with_one_client(
    redis_url: str, clients_made: list[Any]
) -> None:
    redis_transport.install()
    assert _round_trip(redis_url, 20) == list(range(20))
    # The channels' async clients, and one sync client per channel: not one per command.
    assert len(clients_made) <= 4


def test_kombus_own_transport_made_a_client_per_command(
    redis_url: str, clients_made: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why the transport exists. When this fails, kombu reuses its clients itself: drop
    orchestrator.engine.redis_transport."""
    from kombu import transport

    monkeypatch.setitem(transport.TRANSPORT_ALIASES, "redis", redis_transport.KOMBU)
    monkeypatch.delitem(transport._transport_cache, "redis", raising=False)
    assert _round_trip(redis_url, 20) == list(range(20))
    assert len(clients_made) >= 40  # a publish and an ack each, at least


def test_a_channel_whose_pool_was_replaced_gets_a_client_on_the_new_pool(redis_url: str) -> None:
    redis_transport.install()
    with Connection(redis_url) as connection:
        channel = connection.default_channel
        assert isinstance(channel, redis_transport.Channel)
        with channel.conn_or_acquire() as first, channel.conn_or_acquire() as again:
            assert first is again
            assert first.connection_pool is channel.pool
        channel._disconnect_pools()  # what kombu does after a lost connection or a fork
        with channel.conn_or_acquire() as after:
            assert after is not first
            assert after.connection_pool is channel.pool
            assert after.ping()


def test_the_app_uses_it_for_redis_urls() -> None:
    app = create_app(Settings(broker_url="redis://127.0.0.1:6379/0"))
    with app.connection_for_write("redis://127.0.0.1:6379/0") as connection:
        assert connection.transport_cls == "redis"
        assert issubclass(type(connection.transport), redis_transport.Transport)
    with app.connection_for_write("rediss://127.0.0.1:6379/0") as connection:
        assert issubclass(type(connection.transport), redis_transport.Transport)
