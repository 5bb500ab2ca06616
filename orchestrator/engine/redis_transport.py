"""kombu's Redis transport, with one client per channel instead of one per command.

kombu 5.x builds a new `redis.Redis` for every synchronous command of a channel: each
publish, each fanout event, each unacked-index update and each ack. redis-py 8 copies its
~250 response callbacks into a new case-insensitive dict in every client's constructor, so
on a busy worker that copy was about 7 % of its CPU (py-spy, `bench.compare`). A client
holds no state of its own beyond its pool (commands take a pooled connection each), so
one per channel is safe from every thread; a channel that replaces its pool after a lost
connection gets a new client on the new pool.

`install()` points kombu's `redis://` and `rediss://` at this transport for the process;
`install(KOMBU)` points them back at kombu's own, for a comparison. Celery's
`broker_transport` setting would choose it for the app alone, but then the connection's
URI names the class instead of `redis` (kombu's `Connection.as_uri`), and Flower, which
picks its broker API by that URI's scheme, shows no queue lengths
(tests/ops/test_flower.py). docs/kombu-redis-client.md is the change written up for kombu;
when kombu reuses its clients itself, the canary test fails and this module goes.
"""

from __future__ import annotations

from typing import Any

from kombu import transport as kombu_transport
from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis

_SCHEMES = ("redis", "rediss")
ONE_CLIENT_PER_CHANNEL = f"{__name__}:Transport"
KOMBU = "kombu.transport.redis:Transport"


class Channel(kombu_redis.Channel):  # type: ignore[misc]
    _sync_client: Any = None

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:
            return super()._create_client(asynchronous=True)
        client = self._sync_client
        if client is None or client.connection_pool is not self.pool:
            client = self._sync_client = super()._create_client()
        return client


class Transport(kombu_redis.Transport):  # type: ignore[misc]
    Channel = Channel


def install(transport: str = ONE_CLIENT_PER_CHANNEL) -> None:
    for scheme in _SCHEMES:
        if TRANSPORT_ALIASES.get(scheme) != transport:
            TRANSPORT_ALIASES[scheme] = transport
            # kombu memoises what a scheme resolved to: a connection made before this
            # call must not keep the old transport for the process.
            kombu_transport._transport_cache.pop(scheme, None)
