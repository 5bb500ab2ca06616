"""Unhandled errors answered as a 500 problem, with the connection kept open.

Starlette's outermost error middleware answers an unhandled exception and then raises it
again (so servers can log it); uvicorn, seeing an exception after the response started,
closes the connection. A client reusing that keep-alive connection for its next request
then meets a reset. Answering here, inside that middleware, ends the request normally.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from orchestrator.api.problems import unexpected_error_response
from orchestrator.observability.http_middleware import HttpMiddleware

log = logging.getLogger("orchestrator.api.problems")


class UnexpectedErrorMiddleware(HttpMiddleware):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception:
            if started:  # half a response is out: only closing the connection is honest
                raise
            request: Any = Request(scope)
            log.exception("unhandled error on %s %s", request.method, request.url.path)
            await unexpected_error_response(request)(scope, receive, send)
