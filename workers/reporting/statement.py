"""The assessor's statement on the report: the conclusion, the scope boundary and the
period assessed. Reviewers write it by amending the report draft's one row, `assessor`;
the report is then drafted again with it, and every later draft carries it (with who
wrote what, when and why)."""

from __future__ import annotations

from typing import Any

from orchestrator.db.models import Artifact
from workers.analysis.reviewer_carry import HISTORY, carry

ROW = "assessor"
FIELDS = ("conclusion", "scope_boundary", "period_start", "period_end", "note")


def statement(previous: Artifact | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The statement row for a new report draft, carried from the previous draft, and what
    was carried (None when there was no previous draft)."""
    row: dict[str, Any] = {"id": ROW, **dict.fromkeys(FIELDS)}
    carried = carry(previous, [row], "statement", "id")
    row["set_by"] = sorted({str(c["by"]) for c in row.get(HISTORY, []) if c.get("by")})
    return row, carried
