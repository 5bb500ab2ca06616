"""Empty a test or benchmark broker before a fleet starts on it: a Redis database flushed,
or the fleet's queues deleted from a RabbitMQ vhost (the workers declare them afresh, as
quorum queues)."""

from __future__ import annotations

from contextlib import closing

import redis
from kombu import Connection

from orchestrator.engine.broker_topology import is_amqp
from orchestrator.engine.routing import QUEUES


def delete_fleet_queues(url: str) -> None:
    """Delete the fleet's queues (and their messages) on the RabbitMQ vhost at `url`."""
    with Connection(url, connect_timeout=10) as connection:
        for name in QUEUES:
            with closing(connection.channel()) as channel:
                channel.queue_delete(name)


def empty_broker(url: str) -> None:
    if is_amqp(url):
        delete_fleet_queues(url)
        return
    with closing(redis.Redis.from_url(url)) as client:
        client.flushdb()
