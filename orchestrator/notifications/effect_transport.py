"""The one HTTP call an effect makes, telling apart "not sent" from "sent, no answer".

A failure before the request was written (no connection) means the effect did not happen:
trying again is safe. Once it was written, a timeout or a dropped connection leaves the
outcome unknown: the target may have acted on it. Redirects are not followed.
"""

from __future__ import annotations

import http.client
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit


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
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(
            parts.hostname or "",
            parts.port,
            timeout=timeout_s,
            context=ssl.create_default_context(),
        )
    else:
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout_s)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        try:
            connection.connect()
        except OSError as error:
            return Answer(None, f"not sent: {type(error).__name__}: {error}")
        try:
            connection.request("POST", path, body=body, headers=dict(headers))
            response = connection.getresponse()
            response.read()
        except (OSError, http.client.HTTPException) as error:
            return Answer(None, f"sent, no answer: {type(error).__name__}: {error}", sent=True)
        ok = 200 <= response.status < 300
        return Answer(response.status, None if ok else f"HTTP {response.status}", sent=True)
    finally:
        connection.close()
