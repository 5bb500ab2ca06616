"""Text normalisation: one canonical form, so equal text hashes and chunks equally."""

from __future__ import annotations

import re
import unicodedata

_NEWLINES = re.compile(r"\r\n?|[\u2028\u2029\x0b\x0c\x85]")
_INLINE_SPACE = re.compile(r"[^\S\n]+")
_BLANK_RUNS = re.compile(r"\n{3,}")


def _is_dropped(char: str) -> bool:
    # Control (Cc) and format (Cf: zero-width, BOM, bidi overrides) characters carry no
    # content and can hide text from reviewers; newlines and tabs are layout, kept.
    return char not in "\n\t" and unicodedata.category(char) in ("Cc", "Cf")


def normalise_text(text: str) -> str:
    """NFC, newlines unified, control characters dropped, whitespace collapsed.

    Paragraph breaks (one blank line) survive; runs of spaces, tabs and
    non-breaking spaces become one space; lines lose trailing blanks.
    """
    text = unicodedata.normalize("NFC", _NEWLINES.sub("\n", text))
    text = "".join(char for char in text if not _is_dropped(char))
    lines = (_INLINE_SPACE.sub(" ", line).strip() for line in text.split("\n"))
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip()


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
