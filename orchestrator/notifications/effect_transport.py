"""The one HTTP call an effect makes, telling apart "not sent" from "sent, no answer".

A failure before the request was written (no connection) means the effect did not happen:
trying again is safe. Once it was written, a timeout or a dropped connection leaves the
outcome unknown: the target may have acted on it. Redirects are not followed. The
address is checked after resolving the name and the connection pinned to it
(notifications.pinned_http); errors are categories, without the network stack's words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from orchestrator.notifications.pinned_http import post_once, status_error


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
    posted = post_once(url, body, headers, timeout_s, "export")
    if posted.refused is not None:
        return Answer(None, f"not sent: {posted.refused}")
    if posted.status_code is None:
        return Answer(None, "sent, no answer", sent=True)
    return Answer(posted.status_code, status_error(posted.status_code), sent=True)
