"""The requirement statuses a person set, and who: the SoA's implementation status and a
gap finding's assessed status, each only where an amendment (on that version or carried
into it from an earlier one) set it. A value no amendment set is not a person's status,
whoever drafted it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator.service.amendments import STATUS_FIELDS
from orchestrator.service.draft_rows import row_names
from workers.analysis.reviewer_carry import reviewer_rows
from workers.reporting.render import ReportInput
from workers.soa_content import KEY, ROWS, soa_rows


@dataclass(frozen=True)
class PersonStatus:
    status: str
    by: str | None  # None: carried from an earlier version whose author is not recorded


def person_set_statuses(report: ReportInput) -> dict[str, PersonStatus]:
    """By requirement label ("SOC 2 CC6.1"); the gap analysis, drafted later, wins."""
    found = _soa(report.soa)
    for key, entry in reviewer_rows(report.gaps, "gaps", "control_id").items():
        status = next((entry["fields"][f] for f in STATUS_FIELDS if entry["fields"].get(f)), None)
        if status:
            found[key] = PersonStatus(str(status), _author(entry["changes"]))
    return found


def _soa(content: dict[str, Any]) -> dict[str, PersonStatus]:
    rows = soa_rows(content)
    names = row_names(rows, KEY)
    by_label: dict[str, PersonStatus] = {}

    def label(row: dict[str, Any]) -> str:
        return f"{row.get('framework')} {row.get(KEY)}"

    for entry in (content.get("carried_forward") or {}).get("rows", []):
        if "implementation_status" not in entry.get("fields", []):
            continue
        row = names.get(f"{entry.get('framework')} {entry.get('requirement_id')}")
        if row is not None and row.get("implementation_status"):
            by_label[label(row)] = PersonStatus(str(row["implementation_status"]), None)
    if not isinstance(content.get(ROWS), list):
        return by_label
    for amendment in content.get("amendments", []):
        for change in amendment.get("rows", []):
            row = names.get(str(change.get("row")))
            if row is None or "implementation_status" not in (change.get("after") or {}):
                continue
            if row.get("implementation_status"):
                by_label[label(row)] = PersonStatus(
                    str(row["implementation_status"]), amendment.get("by")
                )
    return by_label


def _author(changes: list[dict[str, Any]]) -> str | None:
    authors = [c.get("by") for c in changes if c.get("field") in STATUS_FIELDS and c.get("by")]
    return str(authors[-1]) if authors else None
