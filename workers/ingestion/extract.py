"""From a stored document to parsed text, or the typed reason why it has none.

The worker only checks what is cheap and safe (type, size, checksum, the first bytes);
parsing happens in the parser process.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.config.settings import get_settings
from orchestrator.db.models import Document
from orchestrator.formats import media
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
from orchestrator.formats.sniff import (
    HEAD_BYTES,
    OLE_FAMILY,
    PDF_FAMILY,
    TEXT_FAMILY,
    ZIP_FAMILY,
    content_family,
    ole_verdict,
)
from orchestrator.jobs.interface import JobFailure
from workers.ingestion.parse import ParsedDocument
from workers.ingestion.readers.registry import load_plugins, supported_media_types
from workers.ingestion.sandbox import ParserSandbox

_EXPECTED_FAMILY = {media.PDF: PDF_FAMILY, media.DOCX: ZIP_FAMILY, media.XLSX: ZIP_FAMILY}


def precheck(document: Document, limits: IngestionLimits) -> tuple[Path, str]:
    """What the worker checks before the parser sees the file: a supported type, the
    size, the checksum and that the first bytes are what the type says."""
    load_plugins(limits.reader_plugins)
    media_type = media.base_media_type(document.media_type)
    if media_type not in supported_media_types():
        accepted = ", ".join(sorted(supported_media_types()))
        raise DocumentError(
            DocumentErrorCode.UNSUPPORTED_TYPE,
            f"unsupported media type {document.media_type!r} (accepted: {accepted})",
        )
    path = Path(document.storage_path)
    head = _check_file(document, path)
    _check_family(media_type, head)
    return path, media_type


def require_text(parsed: ParsedDocument) -> ParsedDocument:
    if not parsed.has_text:
        detail = (
            "it has headings but no body text"
            if parsed.headings
            else "the document contains no text"
        )
        raise DocumentError(DocumentErrorCode.NO_EXTRACTABLE_TEXT, f"no extractable text: {detail}")
    return parsed


def extract(document: Document, sandbox: ParserSandbox) -> ParsedDocument:
    """One document, checked, parsed in the sandbox, with text."""
    path, media_type = precheck(document, sandbox.limits)
    return require_text(sandbox.parse(path, media_type))


def _check_file(document: Document, path: Path) -> bytes:
    """Size and checksum, streaming; returns the first bytes for the type check."""
    limit = get_settings().max_document_bytes
    try:
        size = path.stat().st_size
        if size == 0:
            raise DocumentError(DocumentErrorCode.EMPTY_FILE, "the file is empty")
        if size > limit:
            raise DocumentError(
                DocumentErrorCode.TOO_LARGE, f"{size} bytes exceeds the {limit}-byte limit"
            )
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
            digest.update(head)
            while block := handle.read(1 << 20):
                digest.update(block)
    except FileNotFoundError as error:
        raise DocumentError(DocumentErrorCode.FILE_MISSING, "the stored file is missing") from error
    except OSError as error:
        # A volume hiccup, not the document's fault: let the job try again.
        raise JobFailure(
            "storage_unavailable",
            f"cannot read {document.filename}: {error.strerror}",
            retryable=True,
        ) from error
    if digest.hexdigest() != document.sha256:
        # Chunk ids derive from the recorded hash: never index different bytes under it.
        raise DocumentError(
            DocumentErrorCode.CHECKSUM_MISMATCH, "stored file does not match its recorded SHA-256"
        )
    return head


def _check_family(media_type: str, head: bytes) -> None:
    expected = _EXPECTED_FAMILY.get(media_type)
    if expected is None and media_type not in media.TEXT_TYPES:
        return  # a plugin's type: its reader checks its own content
    try:
        family = content_family(head)
    except DocumentError as error:
        if error.code is not DocumentErrorCode.UNSUPPORTED_TYPE:
            raise
        what = "binary content" if expected is None else error.message.split(" (")[0]
        raise DocumentError(
            DocumentErrorCode.WRONG_TYPE, f"{what} declared as {media_type}"
        ) from error
    if family == OLE_FAMILY and media_type in media.ARCHIVE_TYPES:
        raise ole_verdict(head)
    if family != (expected or TEXT_FAMILY):
        raise DocumentError(
            DocumentErrorCode.WRONG_TYPE,
            f"the content is not {media_type} (it looks like {family})",
        )
