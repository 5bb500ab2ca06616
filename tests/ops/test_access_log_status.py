"""The access log's status: what the server answered, and 499 (not 500) for a request
cancelled before any answer started, as a client's timeout does."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from orchestrator.observability.asgi import CLIENT_CLOSED, TraceContextMiddleware

SCOPE = {"type": "http", "method": "GET", "path": "/api/v1/catalogs", "headers": []}


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _send(message: dict[str, Any]) -> None:
    return None


def _statuses(caplog: pytest.LogCaptureFixture) -> list[int]:
    return [r.status for r in caplog.records if r.name == "orchestrator.api.access"]  # type: ignore[attr-defined]


def test_a_request_cancelled_before_its_answer_is_logged_499(
    caplog: pytest.LogCaptureFixture,
) -> None:
    started = asyncio.Event()

    async def slow(scope: Any, receive: Any, send: Any) -> None:
        started.set()
        await asyncio.Event().wait()  # never answers

    async def cancelled() -> None:
        task = asyncio.create_task(TraceContextMiddleware(slow)(SCOPE, _receive, _send))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with caplog.at_level(logging.INFO, logger="orchestrator.api.access"):
        asyncio.run(cancelled())
    assert _statuses(caplog) == [CLIENT_CLOSED]


def test_an_app_that_fails_before_answering_is_logged_500(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("no answer")

    with (
        caplog.at_level(logging.INFO, logger="orchestrator.api.access"),
        pytest.raises(RuntimeError),
    ):
        asyncio.run(TraceContextMiddleware(broken)(SCOPE, _receive, _send))
    assert _statuses(caplog) == [500]


def test_the_answered_status_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def teapot(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 418, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    with caplog.at_level(logging.INFO, logger="orchestrator.api.access"):
        asyncio.run(TraceContextMiddleware(teapot)(SCOPE, _receive, _send))
    assert _statuses(caplog) == [418]
