"""The one HTTP call an effect makes, telling apart "not sent" from "sent, no answer".

A failure before the request was written (no connection) means the effect did not happen:
trying again is safe. Once it was written, a timeout or a dropped connection leaves the
outcome unknown: the target may have acted on it. Redirects are not followed. The
address is checked after resolving the name and the connection pinned to it
(notifications.pinned_http); errors are categories, without the network stack's words.
"""

from __future__ import annotations

import http.client
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from orchestrator.config.settings import get_settings
from orchestrator.notifications.pinned_http import NotConnected, connect, status_error

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answer:
    status_code: int | None
    error: str | None = None
    sent: bool = False
    """The request was written (in full or in part): the target may have acted on it."""

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def unknown(self) -> bool:
        return self.status_code is None and self.sent


Send = Callable[[str, bytes, Mapping[str, str], float], Answer]


def send(url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> Answer:
    parts = urlsplit(url)
    try:
        connection = connect(parts, timeout_s, get_settings().outbound.allowed_networks)
    except NotConnected as refused:
        return Answer(None, f"not sent: {refused.category}")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        try:
            connection.request("POST", path, body=body, headers=dict(headers))
            response = connection.getresponse()
            response.read()
        except (OSError, http.client.HTTPException) as error:
            log.info("export to %s: %s: %s", parts.hostname, type(error).__name__, error)
            return Answer(None, "sent, no answer", sent=True)
        return Answer(response.status, status_error(response.status), sent=True)
    finally:
        connection.close()
