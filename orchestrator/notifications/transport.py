"""The one HTTP call a delivery makes: POST to a checked address, no redirects, a status
code or an error category."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from orchestrator.notifications.pinned_http import post_once, status_error


@dataclass(frozen=True)
class Response:
    status_code: int | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


Post = Callable[[str, bytes, Mapping[str, str], float], Response]


def post(url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> Response:
    posted = post_once(url, body, headers, timeout_s, "webhook")
    if posted.status_code is None:
        return Response(None, posted.refused or "no answer")
    return Response(posted.status_code, status_error(posted.status_code))
