"""`X-Content-Type-Options: nosniff` on every response of the app: the API's, the console's
pages and its static files, errors included, so no browser reads a body as another type
than the one it is declared as."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import Message, Receive, Scope, Send

from orchestrator.observability.http_middleware import HttpMiddleware


class NoSniffMiddleware(HttpMiddleware):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)["X-Content-Type-Options"] = "nosniff"
            await send(message)

        await self.app(scope, receive, send_with_header)
