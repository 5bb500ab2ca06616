"""Markdown (with front matter) and plain text."""

from __future__ import annotations

from pathlib import Path

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.formats import media
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
from workers.ingestion.normalise import decode_text
from workers.ingestion.parse import ParsedDocument, parse


def read_text(
    path: Path,
    limits: IngestionLimits,
    media_type: str = media.PLAIN_TEXT,
) -> ParsedDocument:
    return parse(decoded(path, limits, media_type), media_type)


def read_markdown(path: Path, limits: IngestionLimits) -> ParsedDocument:
    return read_text(path, limits, media.MARKDOWN)


def decoded(path: Path, limits: IngestionLimits, media_type: str) -> str:
    text = decode_text(path.read_bytes())
    if text is None:
        raise DocumentError(
            DocumentErrorCode.WRONG_TYPE, f"binary content declared as {media_type}"
        )
    if len(text) > limits.max_text_chars:
        raise DocumentError(
            DocumentErrorCode.TOO_LARGE, f"more than {limits.max_text_chars} characters of text"
        )
    return text
