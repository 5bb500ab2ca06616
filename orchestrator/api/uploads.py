"""Receiving one uploaded document: multipart streamed to a temp file under a size cap.

The body is parsed as it arrives, so an oversized file is refused as soon as the cap is
crossed, without reading the rest. The temp file is removed whatever happens; only the
documents module decides whether the content is stored.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from fastapi import Request
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect

from orchestrator.api.problems import ApiProblem

FILE_FIELD = "file"
MAX_HEADER_BYTES = 8 * 1024

#: The OpenAPI description of the upload body (parsed by hand, so declared here).
UPLOAD_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": [FILE_FIELD],
                "additionalProperties": False,
                "properties": {
                    FILE_FIELD: {
                        "type": "string",
                        "format": "binary",
                        "description": "The document. Its type is decided from its content; a "
                        "declared Content-Type must agree with it.",
                    }
                },
            }
        }
    },
}


@dataclass
class ReceivedFile:
    filename: str
    declared_type: str | None
    path: Path
    size: int
    sha256: str


@dataclass
class _Part:
    headers: dict[str, str] = field(default_factory=dict)
    header_field: bytearray = field(default_factory=bytearray)
    header_value: bytearray = field(default_factory=bytearray)
    header_bytes: int = 0


class _Receiver:
    """Callbacks of the streaming parser: the one file part goes to `sink`."""

    def __init__(self, sink: IO[bytes], max_bytes: int) -> None:
        self.sink, self.max_bytes = sink, max_bytes
        self.part = _Part()
        self.filename: str | None = None
        self.declared_type: str | None = None
        self.writing = False
        self.size = 0
        self.digest = hashlib.sha256()
        self.ended = False

    def callbacks(self) -> dict[str, Any]:
        return {
            "on_part_begin": self._begin,
            "on_header_field": self._field,
            "on_header_value": self._value,
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_done,
            "on_part_data": self._data,
            "on_part_end": self._part_end,
            "on_end": self._end,
        }

    def _begin(self) -> None:
        self.part = _Part()

    def _field(self, data: bytes, start: int, end: int) -> None:
        self._count(end - start)
        self.part.header_field += data[start:end]

    def _value(self, data: bytes, start: int, end: int) -> None:
        self._count(end - start)
        self.part.header_value += data[start:end]

    def _count(self, size: int) -> None:
        self.part.header_bytes += size
        if self.part.header_bytes > MAX_HEADER_BYTES:
            raise ApiProblem(400, "malformed_multipart", "a part's headers are too large")

    def _header_end(self) -> None:
        name = bytes(self.part.header_field).decode("latin-1").strip().lower()
        self.part.headers[name] = bytes(self.part.header_value).decode("latin-1").strip()
        self.part.header_field, self.part.header_value = bytearray(), bytearray()

    def _headers_done(self) -> None:
        _, options = parse_options_header(self.part.headers.get("content-disposition", ""))
        name = options.get(b"name", b"").decode("utf-8", "replace")
        if name != FILE_FIELD:
            raise ApiProblem(
                422,
                "unexpected_field",
                f"only one field, {FILE_FIELD!r}, is accepted; got {name!r}",
            )
        if self.filename is not None:
            raise ApiProblem(422, "too_many_files", "upload one document per request")
        filename = options.get(b"filename")
        if filename is None:
            raise ApiProblem(422, "file_missing", f"{FILE_FIELD!r} must be a file part")
        self.filename = filename.decode("utf-8", "replace")
        declared, _ = parse_options_header(self.part.headers.get("content-type", ""))
        self.declared_type = declared.decode("latin-1").lower() or None
        self.writing = True

    def _data(self, data: bytes, start: int, end: int) -> None:
        if not self.writing:
            return
        self.size += end - start
        if self.size > self.max_bytes:
            raise ApiProblem(
                413,
                "document_too_large",
                f"the document exceeds the {self.max_bytes}-byte limit",
                limit_bytes=self.max_bytes,
            )
        chunk = data[start:end]
        self.digest.update(chunk)
        self.sink.write(chunk)

    def _part_end(self) -> None:
        self.writing = False

    def _end(self) -> None:
        self.ended = True


def _boundary(request: Request) -> bytes:
    media_type, options = parse_options_header(request.headers.get("content-type", ""))
    boundary = options.get(b"boundary")
    if media_type != b"multipart/form-data" or not boundary:
        raise ApiProblem(
            415,
            "unsupported_media_type",
            "upload the document as multipart/form-data with a 'file' part",
        )
    return boundary


@asynccontextmanager
async def received_upload(
    request: Request, directory: Path, max_bytes: int
) -> AsyncIterator[ReceivedFile]:
    """Stream the request's one file into a temp file in `directory`; removed on exit."""
    boundary = _boundary(request)
    directory.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=directory, prefix="upload-")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as sink:
            receiver = _Receiver(sink, max_bytes)
            await _parse(request, boundary, receiver)
        if receiver.filename is None:
            raise ApiProblem(422, "file_missing", f"the request has no {FILE_FIELD!r} part")
        yield ReceivedFile(
            filename=receiver.filename,
            declared_type=receiver.declared_type,
            path=path,
            size=receiver.size,
            sha256=receiver.digest.hexdigest(),
        )
    finally:
        path.unlink(missing_ok=True)


async def _parse(request: Request, boundary: bytes, receiver: _Receiver) -> None:
    try:
        parser = MultipartParser(boundary, receiver.callbacks())  # type: ignore[arg-type]
        async for chunk in request.stream():
            if chunk:
                parser.write(chunk)
        parser.finalize()
    except FormParserError as error:
        raise ApiProblem(
            400, "malformed_multipart", f"the multipart body is malformed: {error}"
        ) from error
    except ClientDisconnect as error:
        raise ApiProblem(
            400, "client_disconnected", "the upload ended before the body was complete"
        ) from error
    if not receiver.ended:
        raise ApiProblem(400, "malformed_multipart", "the multipart body ended early")
