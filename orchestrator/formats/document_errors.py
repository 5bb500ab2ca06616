"""Why a document was not ingested: a stable code and a sentence a person can act on."""

from __future__ import annotations

from enum import StrEnum

from orchestrator.contracts.errors import FleetError


class DocumentErrorCode(StrEnum):
    """Per-document failure codes. They never fail the run on their own."""

    UNSUPPORTED_TYPE = "unsupported_type"
    """The content is no format the readers know (an image, a legacy .doc, JSON data)."""
    WRONG_TYPE = "wrong_type"
    """The content is not what the document was recorded as (a ZIP recorded as a PDF)."""
    EMPTY_FILE = "empty_file"
    TOO_LARGE = "too_large"
    """Over the byte, page or extracted-text limit."""
    CORRUPT_FILE = "corrupt_file"
    """The parser could not read the structure (truncated, malformed)."""
    ENCRYPTED = "encrypted"
    """Password-protected: the text cannot be read without the password."""
    NO_EXTRACTABLE_TEXT = "no_extractable_text"
    """Parsed, but there is no text (a scan without a text layer, a title only)."""
    ARCHIVE_LIMITS = "archive_limits"
    """A DOCX/XLSX whose ZIP would expand past the size, ratio or entry limits."""
    PARSE_TIMEOUT = "parse_timeout"
    """The parser ran past its time limit and was stopped."""
    PARSER_CRASHED = "parser_crashed"
    """The parser process died (a crash in native code, out of memory)."""
    FILE_MISSING = "file_missing"
    CHECKSUM_MISMATCH = "checksum_mismatch"
    """The stored bytes no longer match the SHA-256 recorded at upload."""


class DocumentError(FleetError):
    """This document cannot be ingested; the others still are."""

    def __init__(self, code: DocumentErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message
