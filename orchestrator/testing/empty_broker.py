"""Empty a test or benchmark broker before a fleet starts on it: a Redis database flushed,
or the fleet's queues on a RabbitMQ vhost purged. Purged, not deleted: this process's
kombu remembers the queues it declared and does not declare them again, so a message it
sent to a deleted queue before a worker declared it afresh would be dropped."""

from __future__ import annotations

from contextlib import closing

import redis
from amqp.exceptions import ChannelError
from kombu import Connection

from orchestrator.engine.broker_topology import is_amqp
from orchestrator.engine.routing import QUEUES


def purge_fleet_queues(url: str) -> None:
    """Drop the messages of the fleet's queues on the RabbitMQ vhost at `url` (a queue not
    declared yet has none)."""
    with Connection(url, connect_timeout=10) as connection:
        for name in QUEUES:
            channel = connection.channel()
            try:
                channel.queue_purge(name)
            except ChannelError:  # 404: not declared yet; the error closed the channel
                continue
            channel.close()


def empty_broker(url: str) -> None:
    if is_amqp(url):
        purge_fleet_queues(url)
        return
    with closing(redis.Redis.from_url(url)) as client:
        client.flushdb()
