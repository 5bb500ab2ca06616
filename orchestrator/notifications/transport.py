"""The one HTTP call a delivery makes: POST, no redirects, a status code or an error."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Response:
    status_code: int | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


Post = Callable[[str, bytes, Mapping[str, str], float], Response]


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # a 3xx is an answer, not somewhere else to send a signed body


_opener = urllib.request.build_opener(_NoRedirects)


def post(url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> Response:
    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    try:
        with _opener.open(request, timeout=timeout_s) as answer:
            return Response(answer.status)
    except urllib.error.HTTPError as error:
        return Response(error.code, f"HTTP {error.code}")
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return Response(None, f"{type(error).__name__}: {reason}")
