"""What every spreadsheet export (CSV, XLSX) shares: cells a spreadsheet will not run as
formulas, and XLSX bytes that depend on the content only."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from collections.abc import Iterable, Sequence
from typing import Any

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_CORE_DATES = re.compile(rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:\2>)")
#: The control characters XML 1.0 cannot carry (openpyxl refuses them in a cell).
_NOT_IN_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def safe_cell(value: Any) -> str:
    """Text a spreadsheet will not run: a leading =, +, -, @ is quoted (CSV injection)."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def csv_bytes(rows: Iterable[Sequence[Any]]) -> bytes:
    """Rows (already safe cells where it matters) as CSV: CRLF lines, and a BOM that makes
    Excel read UTF-8."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue().encode("utf-8-sig")


def xlsx_text(value: Any) -> str:
    """Text a workbook's XML can hold (a cell, a title): a control character XML cannot
    carry is written as OOXML's `_xHHHH_` escape, which Excel reads back as the character
    (nothing lost)."""
    text = "" if value is None else str(value)
    return _NOT_IN_XML.sub(lambda found: f"_x{ord(found.group()):04X}_", text)


def xlsx_cell(value: Any) -> str:
    """A safe cell for a workbook: not run as a formula, every character kept."""
    return xlsx_text(safe_cell(value))


def deterministic_xlsx(data: bytes, moment: bytes) -> bytes:
    """openpyxl stamps 'now' into the file and its ZIP entries; the same content must
    give the same bytes (content addressing), so both become the given moment."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            payload = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                payload = _CORE_DATES.sub(rb"\g<1>" + moment + rb"\g<3>", payload)
            entry = zipfile.ZipInfo(info.filename, date_time=_FIXED_ZIP_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = info.external_attr
            target.writestr(entry, payload)
    return out.getvalue()


#: A sheet of a workbook: its title, its header and its rows.
Sheet = tuple[str, Sequence[str], Sequence[Sequence[Any]]]


def workbook(title: str, sheets: Sequence[Sheet], moment: str, widest: int = 80) -> bytes:
    """An XLSX of `sheets`: bold frozen header, wrapped cells, each column as wide as its
    longest line (up to `widest` characters), the same bytes for the same content."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    book = Workbook()
    first = book.active
    assert first is not None
    book.remove(first)
    for name, header, rows in sheets:
        sheet = book.create_sheet(name[:31])  # Excel's limit on a sheet's name
        sheet.append([xlsx_cell(h) for h in header])
        for cell in sheet[1]:
            cell.font = Font(bold=True)
        for row in rows:
            sheet.append([xlsx_cell(value) for value in row])
        for index, heading in enumerate(header, start=1):
            longest = max(
                [len(str(heading))]
                + [len(line) for row in rows for line in str(row[index - 1] or "").splitlines()]
            )
            letter = sheet.cell(row=1, column=index).column_letter
            sheet.column_dimensions[letter].width = min(max(longest + 2, 10), widest)
        for cells in sheet.iter_rows(min_row=2):
            for cell in cells:
                cell.alignment = Alignment(wrap_text=True, vertical="top")
        sheet.freeze_panes = "A2"
    book.properties.title = xlsx_text(title)[:250]
    buffer = io.BytesIO()
    book.save(buffer)
    return deterministic_xlsx(buffer.getvalue(), moment.encode())
