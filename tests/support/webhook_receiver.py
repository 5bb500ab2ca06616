"""A webhook receiver on 127.0.0.1 for tests: records each POST, answers scripted codes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    answers: list[int] = field(default_factory=list)
    """Status codes to answer, in order; 204 once they run out."""
    received: list[Received] = field(default_factory=list)
    stalled: threading.Event = field(default_factory=threading.Event)
    """While set, a POST is read in full and then left without an answer (until the
    receiver closes): the sender's outcome is unknown."""

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(item.body) for item in self.received]


@contextmanager
def webhook_receiver(*answers: int) -> Iterator[Receiver]:
    receiver = Receiver(url="", answers=list(answers))
    released = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            receiver.received.append(Received(dict(self.headers.items()), body))
            if receiver.stalled.is_set():
                released.wait()
                return
            self.send_response(receiver.answers.pop(0) if receiver.answers else 204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/lifecycle"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        released.set()
        server.shutdown()
        server.server_close()
