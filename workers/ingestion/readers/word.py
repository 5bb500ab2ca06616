"""DOCX: paragraphs and tables in body order; headings from paragraph styles."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.formats.archive import check_archive
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
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
        raise DocumentError(
            DocumentErrorCode.CORRUPT_FILE, f"not a readable DOCX document ({error})"
        ) from error
    builder = BlockBuilder()
    levels = _StyleLevels(document.styles.element)
    budget = limits.max_text_chars
    for item in document.iter_inner_content():
        text = _table_text(item) if hasattr(item, "rows") else _paragraph(item, builder, levels)
        if text:
            builder.add(text)
            budget -= len(text)
            if budget < 0:
                raise DocumentError(
                    DocumentErrorCode.TOO_LARGE,
                    f"more than {limits.max_text_chars} characters of text",
                )
    return builder.result(_metadata(document))


def _paragraph(paragraph: Any, builder: BlockBuilder, levels: _StyleLevels) -> str:
    text = normalise_inline(paragraph.text)
    if not text:
        return ""
    level = _direct_outline_level(paragraph)
    if level is None:
        style = paragraph._p.find(f"{_W}pPr/{_W}pStyle")
        level = levels.level(style.get(f"{_W}val") if style is not None else None)
    if level is not None and len(text) <= 200:
        builder.heading(level, text)
        return ""
    return text


def _direct_outline_level(paragraph: Any) -> int | None:
    found = paragraph._p.find(f"{_W}pPr/{_W}outlineLvl")
    return _outline_value(found)


def _outline_value(element: Any) -> int | None:
    value = element.get(f"{_W}val") if element is not None else None
    return int(value) + 1 if value is not None and value.isdigit() and int(value) < 9 else None


class _StyleLevels:
    """Heading level per paragraph style id, read once from styles.xml (python-docx's own
    style lookup scans every style per paragraph).

    'Title' is level 0 (above every heading), 'Heading N' level N; a custom style
    inherits its base style's level or declares an outline level."""

    def __init__(self, styles_element: Any) -> None:
        self._styles: dict[str, tuple[str, str | None, int | None]] = {}
        for style in styles_element.iterfind(f"{_W}style"):
            style_id = style.get(f"{_W}styleId")
            if style_id is None:
                continue
            name = style.find(f"{_W}name")
            based = style.find(f"{_W}basedOn")
            self._styles[style_id] = (
                str(name.get(f"{_W}val", "")) if name is not None else "",
                based.get(f"{_W}val") if based is not None else None,
                _outline_value(style.find(f"{_W}pPr/{_W}outlineLvl")),
            )
        self._cache: dict[str | None, int | None] = {None: None}

    def level(self, style_id: str | None) -> int | None:
        if style_id not in self._cache:
            self._cache[style_id] = self._resolve(style_id)
        return self._cache[style_id]

    def _resolve(self, style_id: str | None) -> int | None:
        for _ in range(_MAX_STYLE_DEPTH):
            if style_id is None or style_id not in self._styles:
                return None
            name, based_on, outline = self._styles[style_id]
            if name.lower() == "title":
                return 0
            if match := _HEADING_STYLE.match(name):
                return int(match.group(1))
            if outline is not None:
                return outline
            style_id = based_on
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
