"""DOCX: paragraphs and tables in body order; headings from paragraph styles."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from workers.ingestion.archive import check_archive
from workers.ingestion.errors import DocumentError, DocumentErrorCode
from workers.ingestion.limits import IngestionLimits
from workers.ingestion.normalise import normalise_inline
from workers.ingestion.parse import BlockBuilder, Metadata, ParsedDocument

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MAX_STYLE_DEPTH = 10


def read_docx(path: Path, limits: IngestionLimits) -> ParsedDocument:
    import docx  # imported in the parser process only
    from docx.opc.exceptions import PackageNotFoundError

    with path.open("rb") as handle:
        check_archive(handle, limits)
    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as error:
        raise DocumentError(DocumentErrorCode.CORRUPT_FILE,
                            f"not a readable DOCX document ({error})") from error
    builder = BlockBuilder()
    levels: dict[str, int | None] = {}
    budget = limits.max_text_chars
    for item in document.iter_inner_content():
        text = _table_text(item) if hasattr(item, "rows") else _paragraph(item, builder, levels)
        if text:
            builder.add(text)
            budget -= len(text)
            if budget < 0:
                raise DocumentError(DocumentErrorCode.TOO_LARGE,
                                    f"more than {limits.max_text_chars} characters of text")
    return builder.result(_metadata(document))


def _paragraph(paragraph: Any, builder: BlockBuilder, levels: dict[str, int | None]) -> str:
    text = normalise_inline(paragraph.text)
    if not text:
        return ""
    level = _direct_outline_level(paragraph)
    if level is None:
        level = _style_level(paragraph.style, levels)
    if level is not None and len(text) <= 200:
        builder.heading(level, text)
        return ""
    return text


def _direct_outline_level(paragraph: Any) -> int | None:
    found = paragraph._p.find(f"{_W}pPr/{_W}outlineLvl")
    value = found.get(f"{_W}val") if found is not None else None
    return int(value) + 1 if value is not None and value.isdigit() and int(value) < 9 else None


def _style_level(style: Any, cache: dict[str, int | None]) -> int | None:
    """'Title' is level 0 (above every heading), 'Heading N' level N; a custom style
    inherits its base style's level or declares an outline level."""
    if style is None:
        return None
    key = str(style.style_id)
    if key not in cache:
        cache[key] = _resolve_style_level(style)
    return cache[key]


def _resolve_style_level(style: Any) -> int | None:
    for _ in range(_MAX_STYLE_DEPTH):
        if style is None:
            return None
        name = str(style.name or "")
        if name.lower() == "title":
            return 0
        if match := _HEADING_STYLE.match(name):
            return int(match.group(1))
        outline = style.element.find(f"{_W}pPr/{_W}outlineLvl")
        if outline is not None and str(outline.get(f"{_W}val", "")).isdigit():
            return int(outline.get(f"{_W}val")) + 1
        style = style.base_style
    return None


def _table_text(table: Any) -> str:
    """One line per row; merged cells (repeated by python-docx) appear once."""
    lines = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = normalise_inline(cell.text)
            if text and (not cells or cells[-1] != text):
                cells.append(text)
        if cells:
            lines.append(" | ".join(cells))
    return "\n".join(lines)


def _metadata(document: Any) -> Metadata:
    props = document.core_properties
    metadata: Metadata = {}
    for key in ("title", "subject", "author", "keywords", "category"):
        value = getattr(props, key, None)
        if value:
            metadata[key] = normalise_inline(str(value))
    for key in ("created", "modified"):
        value = getattr(props, key, None)
        if value is not None:
            metadata[key] = value.isoformat()
    return metadata
