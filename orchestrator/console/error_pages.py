"""Every failure under /console is a console page, also those no console route answers: an
unknown address (404), a method a page does not take (405), a body over the limit (413),
a failure in a middleware or a static file. The API's handlers answer those with problem
JSON; for a console address this middleware replaces such an answer with the console's
page in its style: the reason, and what to do.

Console routes answer their own pages (`web.ConsoleRoute`); this is the net under them.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orchestrator.console.web import TITLES, error_page, unexpected_message

log = logging.getLogger(__name__)

PREFIX = "/console"
_SAID = {
    404: "There is no such page in the console.",
    405: "This page does not take that kind of request: use the console's links and forms.",
}


def _is_json(message: Message) -> bool:
    headers = dict(message.get("headers") or [])
    return b"json" in headers.get(b"content-type", b"")


class ConsoleErrorPages:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(PREFIX):
            await self.app(scope, receive, send)
            return
        held: dict[str, Any] = {}

        async def watched(message: Message) -> None:
            start = message["type"] == "http.response.start"
            if start and message["status"] >= 400 and _is_json(message):
                held.update(status=message["status"], body=b"")
                return
            if message["type"] == "http.response.body" and "status" in held:
                held["body"] += message.get("body", b"")
                if not message.get("more_body"):
                    await self._page(scope, receive, send, held["status"], held["body"])
                return
            await send(message)

        await self.app(scope, receive, watched)

    async def _page(
        self, scope: Scope, receive: Receive, send: Send, status: int, body: bytes
    ) -> None:
        request = Request(scope)
        try:
            detail = str(json.loads(body or b"{}").get("detail") or "")
        except (ValueError, AttributeError):
            detail = ""
        if status >= 500:
            message = unexpected_message(request)
        else:
            message = _SAID.get(status) or (detail[:1:].upper() + detail[1:] if detail else "")
        title = TITLES.get(status, "Something went wrong" if status >= 500 else "Refused")
        page = await error_page(request, status, title, message or title)
        await page(scope, receive, send)
