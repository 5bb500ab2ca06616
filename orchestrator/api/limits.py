"""Request body limits, enforced on the declared length and again on the bytes received."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orchestrator.api.problems import problem_response
from orchestrator.api.routers.public_entry import refusal_page, wants_page
from orchestrator.config.console import CONSOLE_UPLOAD_FILES
from orchestrator.config.settings import get_settings
from orchestrator.contracts.errors import FleetError
from orchestrator.observability.http_middleware import HttpMiddleware

_UPLOAD_PATH = re.compile(r"^/api/v1/assessments/[^/]+/documents/?$")
#: The public page of an evidence request's link takes one document, as the API does.
_PUBLIC_UPLOAD_PATH = re.compile(r"^/w/evidence/([^/]+)/?$")
#: The console's upload form carries several documents at once.
_CONSOLE_UPLOAD_PATH = re.compile(r"^/console/assessments/[^/]+/documents/?$")


class BodyTooLarge(FleetError, HTTPException):
    """An HTTPException, so FastAPI's body parsing re-raises it as it is."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body exceeds the {limit}-byte limit")
        self.limit = limit


def body_limit(scope: Scope) -> int:
    """Uploads may carry one document plus multipart framing; everything else is small."""
    api = get_settings().api
    path = scope.get("path", "")
    if scope.get("method") == "POST" and (
        _UPLOAD_PATH.match(path) or _PUBLIC_UPLOAD_PATH.match(path)
    ):
        return get_settings().max_document_bytes + api.multipart_overhead_bytes
    if scope.get("method") == "POST" and _CONSOLE_UPLOAD_PATH.match(scope.get("path", "")):
        return CONSOLE_UPLOAD_FILES * (
            get_settings().max_document_bytes + api.multipart_overhead_bytes
        )
    return api.max_body_bytes


class BodyLimitMiddleware(HttpMiddleware):
    def __init__(self, app: ASGIApp, limit_for: Callable[[Scope], int] = body_limit) -> None:
        super().__init__(app)
        self.limit_for = limit_for

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.limit_for(scope)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await self._refuse(scope, receive, send, limit)
            return
        received = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except BodyTooLarge:
            if started:
                raise
            await self._refuse(scope, receive, send, limit)

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        message = f"the request body exceeds the {limit}-byte limit"
        public = _PUBLIC_UPLOAD_PATH.match(scope.get("path", ""))
        if public and wants_page(dict(Headers(scope=scope))):
            # A browser's form on the public page gets the refusal as a page.
            await refusal_page(413, message, public.group(1))(scope, receive, send)
            return
        response = problem_response(
            None,
            413,
            "payload_too_large",
            message,
            instance=scope.get("path"),
            limit_bytes=limit,
        )
        await response(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for name, value in headers:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


__all__: list[Any] = ["BodyLimitMiddleware", "BodyTooLarge", "body_limit"]
