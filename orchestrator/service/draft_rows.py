"""The rows of a draft people amend: where each kind keeps them, and the names reviewers
give them (a row's key, or "<framework> <key>" where two selected frameworks share it)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from orchestrator.contracts.signals import ArtifactKind

#: Where each amendable draft keeps its rows, and the field that names a row.
ROWS: dict[ArtifactKind, tuple[str, str]] = {
    ArtifactKind.SOA: ("requirements", "requirement_id"),
    ArtifactKind.GAP_ANALYSIS: ("gaps", "control_id"),
    ArtifactKind.MATURITY_ASSESSMENT: ("controls", "control_id"),
    ArtifactKind.POAM: ("items", "id"),
    # The report's assessor statement (conclusion, scope boundary, period): one row.
    ArtifactKind.REPORT: ("statement", "id"),
}


def row_names(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Each row by the name a reviewer gives it: its key, or "<framework> <key>" (the only
    name of a row whose key another selected framework also uses)."""
    counts = Counter(str(row.get(key)) for row in rows)
    names: dict[str, dict[str, Any]] = {}
    for row in rows:
        plain = str(row.get(key))
        if row.get("framework"):
            names[f"{row['framework']} {plain}"] = row
        if counts[plain] == 1:
            names[plain] = row
    return names


def row_name(rows: list[dict[str, Any]], key: str, row: dict[str, Any]) -> str:
    """The shortest name that finds `row` among `rows`."""
    plain = str(row.get(key))
    unique = sum(1 for other in rows if str(other.get(key)) == plain) == 1
    return plain if unique or not row.get("framework") else f"{row['framework']} {plain}"
