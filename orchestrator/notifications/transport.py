"""The one HTTP call a delivery makes: POST to a checked address, no redirects, a status
code or an error category."""

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
class Response:
    status_code: int | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


Post = Callable[[str, bytes, Mapping[str, str], float], Response]


def post(url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> Response:
    parts = urlsplit(url)
    try:
        connection = connect(parts, timeout_s, get_settings().outbound.allowed_networks)
    except NotConnected as refused:
        return Response(None, refused.category)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", path, body=body, headers=dict(headers))
        answer = connection.getresponse()
        answer.read()
    except (OSError, http.client.HTTPException) as error:
        log.info("webhook to %s: %s: %s", parts.hostname, type(error).__name__, error)
        return Response(None, "no answer")
    finally:
        connection.close()
    return Response(answer.status, status_error(answer.status))
