"""A TCP proxy in front of RabbitMQ that drops a connection in the middle of a publish.

It forwards AMQP 0-9-1 both ways and reads the frames. When a client publishes a message
to one of the fleet's queues and that publish is one of the ordinals to cut, the proxy
forwards the whole message to the broker, then stops passing anything back: once the broker
confirms it (`basic.ack`), or after a short while, it closes both sides. The publisher never
learns that the broker stored the message; what it does next (retry on a new connection,
or leave the outbox row for the sweep) must neither lose nor double anything.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from orchestrator.engine.routing import QUEUES

PROTOCOL_HEADER = b"AMQP\x00\x00\x09\x01"
METHOD, HEADER, BODY = 1, 2, 3
BASIC_PUBLISH, BASIC_ACK = (60, 40), (60, 80)
FRAME_END = b"\xce"
#: How long the proxy waits for the broker's confirm of a cut publish before closing.
CONFIRM_WAIT_S = 5.0


def _short_string(payload: bytes, offset: int) -> tuple[str, int]:
    size = payload[offset]
    return payload[offset + 1 : offset + 1 + size].decode(), offset + 1 + size


def routing_key_of(payload: bytes) -> str | None:
    """The routing key of a `basic.publish` method frame's payload, else None."""
    if struct.unpack_from(">HH", payload) != BASIC_PUBLISH:
        return None
    _exchange, offset = _short_string(payload, 6)  # class, method, reserved-1
    key, _ = _short_string(payload, offset)
    return key


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("closed")
        chunks += chunk
    return bytes(chunks)


def _read_frame(sock: socket.socket) -> tuple[int, bytes, bytes]:
    """(type, payload, the frame's bytes as received)."""
    head = _read_exactly(sock, 7)
    kind, _channel, size = struct.unpack(">BHI", head)
    rest = _read_exactly(sock, size + 1)
    if rest[-1:] != FRAME_END:
        raise ConnectionError("not an AMQP frame")
    return kind, rest[:-1], head + rest


@dataclass
class _Pair:
    client: socket.socket
    upstream: socket.socket
    cutting: threading.Event = field(default_factory=threading.Event)
    """Set before the cut publish goes out: from then on nothing reaches the client."""
    settled: threading.Event = field(default_factory=threading.Event)
    """The broker confirmed the cut publish, or closed."""
    confirmed: bool = False

    def close(self) -> None:
        for sock in (self.client, self.upstream):
            with contextlib.suppress(OSError):  # already closed by the other side
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


class PublishCutter:
    """Listens on 127.0.0.1:`port`, forwards to `upstream_port`, cuts the publishes to the
    fleet's queues whose ordinals (1-based, over every connection) are in `cut`."""

    def __init__(self, upstream_port: int, cut: Iterable[int]) -> None:
        self.upstream_port = upstream_port
        self.to_cut = set(cut)
        self.published = 0
        self.cut: list[str] = []
        """The routing keys of the publishes cut, in order."""
        self.confirmed_before_cut = 0
        """Cut publishes the broker had confirmed when the proxy closed the connection."""
        self._lock = threading.Lock()
        self._pairs: list[_Pair] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="amqp-cutter").start()

    def url(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.port}//"

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                client.close()
                continue
            pair = _Pair(client, upstream)
            with self._lock:
                self._pairs.append(pair)
            threading.Thread(target=self._client_to_broker, args=(pair,), daemon=True).start()
            threading.Thread(target=self._broker_to_client, args=(pair,), daemon=True).start()

    def _client_to_broker(self, pair: _Pair) -> None:
        try:
            pair.upstream.sendall(_read_exactly(pair.client, len(PROTOCOL_HEADER)))
            while True:
                kind, payload, raw = _read_frame(pair.client)
                key = routing_key_of(payload) if kind == METHOD else None
                if key in QUEUES and self._is_cut(key):
                    pair.cutting.set()  # before the broker can answer it
                    pair.upstream.sendall(raw)
                    self._forward_content(pair)
                    pair.settled.wait(CONFIRM_WAIT_S)
                    with self._lock:
                        self.confirmed_before_cut += pair.confirmed
                    pair.close()
                    return
                pair.upstream.sendall(raw)
        except (ConnectionError, OSError):
            pair.close()

    def _is_cut(self, key: str) -> bool:
        with self._lock:
            self.published += 1
            if self.published not in self.to_cut:
                return False
            self.cut.append(key)
            return True

    @staticmethod
    def _forward_content(pair: _Pair) -> None:
        """The publish's content header and body frames: the broker gets the whole message."""
        kind, payload, raw = _read_frame(pair.client)
        pair.upstream.sendall(raw)
        if kind != HEADER:
            return
        (size,) = struct.unpack_from(">Q", payload, 4)
        while size > 0:
            kind, payload, raw = _read_frame(pair.client)
            pair.upstream.sendall(raw)
            size -= len(payload)

    def _broker_to_client(self, pair: _Pair) -> None:
        try:
            while True:
                kind, payload, raw = _read_frame(pair.upstream)
                if not pair.cutting.is_set():
                    pair.client.sendall(raw)
                elif kind == METHOD and struct.unpack_from(">HH", payload) == BASIC_ACK:
                    pair.confirmed = True  # stored, and the publisher will never know
                    pair.settled.set()
        except (ConnectionError, OSError):
            pair.settled.set()  # nothing more will come: stop waiting
            if not pair.cutting.is_set():
                pair.close()

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            pair.close()
