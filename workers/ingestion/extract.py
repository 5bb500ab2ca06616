"""From a stored document to parsed text, or a clear reason why it has none."""

from __future__ import annotations

from pathlib import Path

from orchestrator.db.models import Document
from orchestrator.jobs.interface import JobFailure
from orchestrator.storage import sha256_hex
from workers.ingestion.normalise import decode_text
from workers.ingestion.parse import (
    SUPPORTED_MEDIA_TYPES,
    ParsedDocument,
    base_media_type,
    parse,
)


class UnusableDocument(Exception):
    """This document yields no text; the others are still ingested."""


def extract(document: Document) -> ParsedDocument:
    media_type = base_media_type(document.media_type)
    if media_type not in SUPPORTED_MEDIA_TYPES:
        accepted = ", ".join(sorted(SUPPORTED_MEDIA_TYPES))
        raise UnusableDocument(f"unsupported media type {document.media_type!r} "
                               f"(accepted: {accepted})")
    data = _read(document)
    if sha256_hex(data) != document.sha256:
        # Chunk ids derive from the recorded hash: never index different bytes under it.
        raise UnusableDocument("stored file does not match its recorded SHA-256")
    text = decode_text(data)
    if text is None:
        raise UnusableDocument(f"binary content declared as {media_type}")
    parsed = parse(text, media_type)
    if not parsed.has_text:
        raise UnusableDocument("the document contains no extractable text")
    return parsed


def _read(document: Document) -> bytes:
    try:
        return Path(document.storage_path).read_bytes()
    except FileNotFoundError as error:
        raise UnusableDocument("the stored file is missing") from error
    except OSError as error:
        # A volume hiccup, not the document's fault: let the job try again.
        raise JobFailure("storage_unavailable",
                         f"cannot read {document.filename}: {error.strerror}",
                         retryable=True) from error
