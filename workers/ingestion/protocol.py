"""Frames between the worker and its parser process: a 4-byte length, then JSON."""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

from orchestrator.contracts.errors import FleetError
from workers.ingestion.parse import Block, ParsedDocument

_LENGTH = struct.Struct(">I")


class ChannelClosed(FleetError):
    """The other side is gone (EOF)."""


class ChannelTimeout(FleetError):
    """No complete frame before the deadline."""


def encode_frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    return _LENGTH.pack(len(body)) + body


def write_frame(fd: int, message: dict[str, Any]) -> None:
    view = memoryview(encode_frame(message))
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_frame(fd: int, deadline: float | None = None, max_bytes: int = 1 << 31) -> Any:
    (length,) = _LENGTH.unpack(_read_exact(fd, _LENGTH.size, deadline))
    if length > max_bytes:
        raise ChannelClosed(f"frame of {length} bytes exceeds {max_bytes}")
    return json.loads(_read_exact(fd, length, deadline))


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    parts: list[bytes] = []
    remaining = size
    while remaining:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise ChannelTimeout()
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise ChannelClosed()
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)


def document_to_wire(parsed: ParsedDocument) -> dict[str, Any]:
    return {
        "ok": True,
        "metadata": parsed.metadata,
        "pages": parsed.pages,
        "headings": parsed.headings,
        "blocks": [[list(b.heading_path), b.text, b.page] for b in parsed.blocks],
    }


def document_from_wire(message: dict[str, Any]) -> ParsedDocument:
    blocks = tuple(Block(tuple(path), text, page) for path, text, page in message["blocks"])
    return ParsedDocument(
        metadata=message.get("metadata") or {},
        blocks=blocks,
        pages=message.get("pages"),
        headings=int(message.get("headings", 0)),
    )
