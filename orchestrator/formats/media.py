"""The media types the readers accept."""

from __future__ import annotations

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
HTML = "text/html"
MARKDOWN = "text/markdown"
PLAIN_TEXT = "text/plain"
CSV = "text/csv"

TEXT_TYPES = frozenset({HTML, MARKDOWN, PLAIN_TEXT, CSV})
ARCHIVE_TYPES = frozenset({DOCX, XLSX})
BUILT_IN_TYPES = frozenset({PDF, DOCX, XLSX, HTML, MARKDOWN, PLAIN_TEXT, CSV})


def base_media_type(media_type: str) -> str:
    """'text/markdown; charset=utf-8' -> 'text/markdown'."""
    return media_type.split(";", 1)[0].strip().lower()
