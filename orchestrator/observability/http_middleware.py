"""The base of the app's own ASGI middlewares (tracing, body limits, error answers,
headers): each acts on HTTP requests only, and passes anything else (the lifespan events)
to the app as it came. Typed loosely, as `observability.asgi` is: no web framework is
imported here."""

from __future__ import annotations

from typing import Any

Scope = dict[str, Any]
Receive = Any
Send = Any


class HttpMiddleware:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one HTTP request (the whole of it: call `self.app` to pass it on)."""
        raise NotImplementedError
