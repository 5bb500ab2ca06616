"""ASGI middleware of the API: each request opens a trace context and logs one line.

The trace id is the caller's `X-Trace-Id` (when it looks like one) or a fresh one; a
signal recorded during the request sets the context to the signal's own trace, which the
response then names in `X-Trace-Id` and the coordinator message carries on.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from typing import Any

from orchestrator.observability.context import close_context, current, open_context
from orchestrator.observability.http_middleware import HttpMiddleware, Receive, Scope, Send

log = logging.getLogger("orchestrator.api.access")

TRACE_HEADER = "x-trace-id"
#: Logged for a request cancelled before its answer started (nginx's "client closed request").
CLIENT_CLOSED = 499
_TRACE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class TraceContextMiddleware(HttpMiddleware):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        open_context(trace_id=_trace_from(scope) or uuid.uuid4().hex)
        began = time.monotonic()
        status = 500

        async def send_with_trace(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                trace_id = current().get("trace_id", "")
                message["headers"] = [
                    *message.get("headers", []),
                    (TRACE_HEADER.encode(), trace_id.encode()),
                ]
            await send(message)

        try:
            await self.app(scope, receive, send_with_trace)
        except asyncio.CancelledError:
            # The client went away (or its timeout cancelled the request) before an answer
            # started: nginx's 499, not a server error.
            if status == 500:
                status = CLIENT_CLOSED
            raise
        finally:
            log.info(
                "%s %s %s",
                scope["method"],
                scope["path"],
                status,
                extra={
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status,
                    "seconds": round(time.monotonic() - began, 4),
                },
            )
            close_context()


def _trace_from(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name.decode("latin-1").lower() == TRACE_HEADER:
            text = value.decode("latin-1").strip()
            return text if _TRACE_ID.match(text) else None
    return None


def install(app: Any) -> None:
    """Log JSON lines with the trace context, and open one context per request."""
    from orchestrator.observability.logs import configure_logging
    from orchestrator.observability.tracing import configure, instrument_app

    configure_logging()
    for name in ("uvicorn", "uvicorn.error"):  # the server's own lines: JSON too
        server_log = logging.getLogger(name)
        server_log.handlers.clear()
        server_log.propagate = True
    configure()
    instrument_app(app)
    http_metrics(app)
    app.add_middleware(TraceContextMiddleware)


#: Paths whose requests are not counted: the scrape itself.
NOT_COUNTED = ("/metrics",)


def http_metrics(app: Any) -> None:
    """Requests by route template, method and status class, and their durations and sizes
    (prometheus-fastapi-instrumentator's `http_request*` families), in the default
    registry the API's /metrics serves (or, with PROMETHEUS_MULTIPROC_DIR, its files)."""
    from prometheus_fastapi_instrumentator import Instrumentator

    Instrumentator(
        excluded_handlers=list(NOT_COUNTED),
        should_group_untemplated=True,  # a path no route serves is one label, not many
    ).instrument(app)
