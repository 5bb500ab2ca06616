"""A newer SCF release made from the official workbook, for version and pin tests.

Row for row the 2022.3 main sheet, with a new release number and three edits a real
release makes: one control withdrawn, one description reworded, one control added.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl

NEW_RELEASE = "2099.1"
WITHDRAWN = "GOV-05.2"
REWORDED = "GOV-02"
ADDED = "GOV-99"
REWORDING = "Mechanisms exist to publish cybersecurity and data protection documentation."


def write_newer_release(source: Path, target: Path) -> Path:
    book = openpyxl.load_workbook(source, read_only=True)
    out = openpyxl.Workbook(write_only=True)
    for sheet in book.worksheets:
        main = sheet.title.startswith("SCF ")
        title = f"SCF {NEW_RELEASE}" if main else sheet.title
        copy = out.create_sheet(title)
        rows = sheet.iter_rows(values_only=True)
        header = next(rows, None)
        if header is None:
            continue
        copy.append(list(header))
        if not main:
            for row in rows:
                copy.append(list(row))
            continue
        keys = [" ".join(str(h).split()) if h else "" for h in header]
        at_id = keys.index("SCF #")
        at_description = keys.index("Secure Controls Framework (SCF) Control Description")
        at_name = keys.index("SCF Control")
        template: list[object] | None = None
        for row in rows:
            values = list(row)
            if values[at_id] == WITHDRAWN:
                continue
            if values[at_id] == REWORDED:
                values[at_description] = REWORDING
                template = list(values)
            copy.append(values)
        assert template is not None
        template[at_id], template[at_name] = ADDED, "Added In The Newer Release"
        copy.append(template)
    book.close()
    out.save(target)
    return target
