"""A newer SCF release made from the official workbook, for version and pin tests.

Row for row the 2022.3 main sheet, with a new release number and three edits a real
release makes: one control withdrawn, one description reworded, one control added.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import openpyxl

NEW_RELEASE = "2099.1"
WITHDRAWN = "GOV-05.2"
REWORDED = "GOV-02"
ADDED = "GOV-99"
REWORDING = "Mechanisms exist to publish cybersecurity and data protection documentation."


#: A main-sheet row (its cells, the sheet's normalised headers) -> the rows written in its
#: place: none withdraws it, several add controls after it.
Edit = Callable[[list[object], list[str]], list[list[object]]]


def rewrite_release(source: Path, target: Path, release: str, edit: Edit) -> Path:
    """The workbook at `source`, row for row, as release `release`, with `edit` applied to
    every row of its main sheet; the other sheets copied unchanged."""
    book = openpyxl.load_workbook(source, read_only=True)
    out = openpyxl.Workbook(write_only=True)
    for sheet in book.worksheets:
        main = sheet.title.startswith("SCF ")
        copy = out.create_sheet(f"SCF {release}" if main else sheet.title)
        rows = sheet.iter_rows(values_only=True)
        header = next(rows, None)
        if header is None:
            continue
        copy.append(list(header))
        keys = [" ".join(str(h).split()) if h else "" for h in header]
        for row in rows:
            for written in edit(list(row), keys) if main else [list(row)]:
                copy.append(written)
    book.close()
    out.save(target)
    return target


def write_newer_release(source: Path, target: Path) -> Path:
    def edit(values: list[object], keys: list[str]) -> list[list[object]]:
        at_id = keys.index("SCF #")
        if values[at_id] == WITHDRAWN:
            return []
        if values[at_id] != REWORDED:
            return [values]
        values[keys.index("Secure Controls Framework (SCF) Control Description")] = REWORDING
        added = list(values)
        added[at_id], added[keys.index("SCF Control")] = ADDED, "Added In The Newer Release"
        return [values, added]

    return rewrite_release(source, target, NEW_RELEASE, edit)
