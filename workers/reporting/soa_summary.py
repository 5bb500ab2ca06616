"""The report's Statement of Applicability in brief when it is long: per family (as the
gap section counts them, `findings_summary.family_of`), its requirements, how many apply,
and how many have each status (a reviewer's, else the proposed one, as the status chart
counts them). A 1,090-row SoA is hundreds of pages that nobody reads row by row in a PDF;
every row, with its justification, basis, evidence and decision, is in the SoA export
(CSV and XLSX), which people filter, and in the report's JSON."""

from __future__ import annotations

from collections import Counter
from typing import Any

from workers.reporting.charts import STATUSES, row_status
from workers.reporting.findings_summary import TOTAL, family_of, natural_key

#: The most rows a table of the report's body shows in full: a longer SoA is counted per
#: family, a longer POA&M listed one short line per item (`render.poam_body`).
ROWS_IN_BODY = 200
SUMMARY_HEADERS = ("Family", "Requirements", "Applicable", *(label for _, label, _ in STATUSES))


def summarised(rows: list[Any]) -> bool:
    return len(rows) > ROWS_IN_BODY


def summary_note(count: int) -> str:
    return (
        f"The Statement of Applicability has {count:,} rows, so this section counts them per "
        "family. Every row, with its justification, basis, evidence and how it was decided, "
        "is in the SoA export (CSV and XLSX) and in the report's JSON."
    )


def family_summary_rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Per family, in the order of the catalogue's ids, then the totals."""
    counts: dict[str, Counter[str]] = {}
    for row in sorted(rows, key=lambda r: natural_key(family_of(r))):
        counts.setdefault(family_of(row), Counter()).update(_facts(row))
    every: Counter[str] = Counter()
    for counted in counts.values():
        every.update(counted)
    return [_row(family, counted) for family, counted in counts.items()] + [_row(TOTAL, every)]


def _facts(row: dict[str, Any]) -> list[str]:
    return ["requirements", row_status(row)] + (["applicable"] if row.get("applicable") else [])


def _row(family: str, counted: Counter[str]) -> tuple[Any, ...]:
    statuses = (counted[key] for key, _, _ in STATUSES)
    return (family, counted["requirements"], counted["applicable"], *statuses)
