"""After a 500, the same keep-alive connection serves the next request (a real uvicorn
server and one httpx connection: the test client has no connections to keep)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from orchestrator.api.app import create_app
from tests.api.conftest import Api


def _app_that_fails() -> FastAPI:
    app = create_app()

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("secret internals")

    @app.post("/boom-async")
    async def boom_async() -> None:
        raise LookupError("more internals")

    return app


@pytest.fixture
def server_url(api: Api) -> Iterator[str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    server = uvicorn.Server(
        uvicorn.Config(_app_that_fails(), log_level="warning", timeout_keep_alive=30)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server never started"
        time.sleep(0.01)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    server.should_exit = True
    thread.join(timeout=30)
    listener.close()


def _connection(response: httpx.Response) -> Any:
    """The client's own address of the connection that carried `response`."""
    return response.extensions["network_stream"].get_extra_info("client_addr")


def test_the_connection_survives_a_500(server_url: str) -> None:
    with httpx.Client(
        base_url=server_url, timeout=30, limits=httpx.Limits(max_connections=1)
    ) as client:
        first = client.get("/healthz")
        assert first.status_code == 200
        for method, path in (("GET", "/boom"), ("POST", "/boom-async")):
            failed = client.request(method, path, json={"any": "body"})
            assert failed.status_code == 500
            assert failed.json()["code"] == "internal_error"
            assert "internals" not in failed.text
            after = client.get("/healthz")
            assert after.status_code == 200
            assert _connection(failed) == _connection(after) == _connection(first)
