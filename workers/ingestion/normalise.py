"""Text normalisation: one canonical form, so equal text hashes and chunks equally."""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache

_NEWLINES = re.compile(r"\r\n?|[\u2028\u2029\x0b\x0c\x85]")
_INLINE_SPACE = re.compile(r"[^\S\n]+")
_TRAILING_SPACE = re.compile(r" *\n *")
_BLANK_RUNS = re.compile(r"\n{3,}")


@lru_cache(maxsize=1)
def dropped_characters() -> dict[int, None]:
    """Control (Cc) and format (Cf: zero-width, BOM, soft hyphen, bidi overrides)
    characters carry no content and can hide text from reviewers; newlines and tabs are
    layout, kept. A translate table, built once from this Python's Unicode tables."""
    return {
        point: None
        for point in range(sys.maxunicode + 1)
        if unicodedata.category(chr(point)) in ("Cc", "Cf") and chr(point) not in "\n\t"
    }


def normalise_text(text: str) -> str:
    """NFC, newlines unified, control characters dropped, whitespace collapsed.

    Paragraph breaks (one blank line) survive; runs of spaces, tabs and
    non-breaking spaces become one space; lines lose leading and trailing blanks.
    Whole-string operations, not per-character Python: this runs on every byte ingested.
    """
    text = _NEWLINES.sub("\n", text)
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    text = text.translate(dropped_characters())
    text = _TRAILING_SPACE.sub("\n", _INLINE_SPACE.sub(" ", text))
    return _BLANK_RUNS.sub("\n\n", text).strip()


def normalise_inline(text: str) -> str:
    """One line: every run of whitespace (newlines included) becomes one space. The same
    canonical form as `normalise_text`, without its regular expressions (it runs once
    per table cell and paragraph)."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.translate(dropped_characters()).split())


def decode_text(data: bytes) -> str | None:
    """Bytes to text; None for content that is evidently binary (NUL bytes)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Legacy office exports are mostly Windows-1252; latin-1 never fails as a last resort.
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            return data.decode("latin-1")
