"""Table rows as searchable paragraphs: "Header: value; Header: value"."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
from workers.ingestion.normalise import normalise_inline
from workers.ingestion.parse import BlockBuilder


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return normalise_inline(str(value))


def _is_header(cells: Sequence[str]) -> bool:
    filled = [c for c in cells if c]
    return len(filled) >= 2 and all(not _is_number(c) for c in filled)


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def add_rows(
    builder: BlockBuilder, rows: Iterable[Sequence[Any]], limits: IngestionLimits, budget: list[int]
) -> list[str]:
    """Each non-empty row becomes one paragraph; the first row names the columns when it
    looks like a header. `budget` holds the characters left for the whole document."""
    header: list[str] = []
    for index, row in enumerate(rows):
        cells = [cell_text(value) for value in row]
        if not any(cells):
            continue
        if index == 0 and _is_header(cells):
            header = cells
            continue
        text = _render(header, cells)
        budget[0] -= len(text)
        if budget[0] < 0:
            raise DocumentError(
                DocumentErrorCode.TOO_LARGE, f"more than {limits.max_text_chars} characters of text"
            )
        builder.add(text)
    return header


def _render(header: Sequence[str], cells: Sequence[str]) -> str:
    if not header:
        return " | ".join(c for c in cells if c)
    parts = []
    for position, value in enumerate(cells):
        if not value:
            continue
        name = header[position] if position < len(header) else ""
        parts.append(f"{name}: {value}" if name else value)
    return "; ".join(parts)
