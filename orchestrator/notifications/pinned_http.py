"""An HTTP(S) connection to an address checked after resolving the name, and to no other:
the name is resolved once, every address it gives is checked, and the socket is opened to
a checked address (the Host header, SNI and the certificate still name the host), so a
second, different DNS answer cannot slip an internal address in between."""

from __future__ import annotations

import http.client
import logging
import socket
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from orchestrator.config.settings import get_settings
from orchestrator.contracts.errors import FleetError
from orchestrator.notifications.outbound_addresses import (
    Address,
    AddressRefused,
    Network,
    resolve_checked,
)

log = logging.getLogger(__name__)

# What a tenant reads back about a connection that failed: a category, never the
# resolved addresses or the network stack's own words (those go to the log).
REFUSED = "destination address not allowed"
UNRESOLVED = "host name did not resolve"
UNREACHABLE = "could not connect"


class NotConnected(FleetError):
    """Nothing was sent; `category` is what the tenant may see."""

    def __init__(self, category: str) -> None:
        super().__init__(category)
        self.category = category


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: Address, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((str(self._address), self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: Address, timeout: float) -> None:
        self._tls = ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=self._tls)
        self._address = address

    def connect(self) -> None:
        raw = socket.create_connection((str(self._address), self.port), self.timeout)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)


def connect(
    parts: SplitResult, timeout_s: float, allowed: Sequence[Network]
) -> http.client.HTTPConnection:
    """A connected connection to the URL's host, at an address checked against `allowed`."""
    host = parts.hostname or ""
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    try:
        addresses = resolve_checked(host, port, allowed)
    except AddressRefused:
        log.warning("outbound request to %s refused: its address is not allowed", host)
        raise NotConnected(REFUSED) from None
    except (OSError, UnicodeError) as error:
        log.info("outbound request to %s: %s: %s", host, type(error).__name__, error)
        raise NotConnected(UNRESOLVED) from None
    kind = _PinnedHTTPS if secure else _PinnedHTTP
    for address in addresses:
        connection = kind(host, port, address, timeout_s)
        try:
            connection.connect()
            return connection
        except OSError as error:
            connection.close()
            log.info(
                "outbound request to %s (%s): %s: %s", host, address, type(error).__name__, error
            )
    raise NotConnected(UNREACHABLE)


def status_error(status: int) -> str | None:
    """What a stored error says of an answer: nothing for a 2xx, never where a 3xx pointed
    (a redirect is an answer, not somewhere else to send a signed body)."""
    if 200 <= status < 300:
        return None
    if 300 <= status < 400:
        return f"HTTP {status} (redirects are not followed)"
    return f"HTTP {status}"


@dataclass(frozen=True)
class Posted:
    """What one POST came to: an answer's status, or none (`refused`: not sent, a
    category the tenant may see; else sent, in full or in part, and no answer)."""

    status_code: int | None
    refused: str | None = None


def post_once(
    url: str, body: bytes, headers: Mapping[str, str], timeout_s: float, what: str
) -> Posted:
    """POST to a checked address, no redirects followed; `what` names it in the log."""
    parts = urlsplit(url)
    try:
        connection = connect(parts, timeout_s, get_settings().outbound.allowed_networks)
    except NotConnected as refused:
        return Posted(None, refused.category)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", path, body=body, headers=dict(headers))
        answer = connection.getresponse()
        answer.read()
    except (OSError, http.client.HTTPException) as error:
        log.info("%s to %s: %s: %s", what, parts.hostname, type(error).__name__, error)
        return Posted(None)
    finally:
        connection.close()
    return Posted(answer.status)
