"""What reviewers set on the rows of a draft (gap findings, POA&M items) carries into the
next draft of the same kind: each amended field, row by row, with the history of changes
(who changed what from what, when and why), so the draft after it carries them again."""

from __future__ import annotations

from typing import Any

from orchestrator.db.models import Artifact
from orchestrator.service.draft_rows import row_names

HISTORY = "reviewer_changes"


def reviewer_rows(
    content: dict[str, Any], rows: str, key: str, named_by: str | None = None
) -> dict[str, dict[str, Any]]:
    """Per row key: the values people set (amended on this version or carried into it)
    and their history, {"fields": {field: value}, "changes": [...]}. Amendments name rows
    by `named_by` (default `key`)."""
    listed = [r for r in content.get(rows, []) if isinstance(r, dict)]
    found: dict[str, dict[str, Any]] = {}
    for row in listed:
        if row.get(HISTORY):
            entry = found.setdefault(str(row.get(key)), {"fields": {}, "changes": []})
            entry["changes"].extend(row[HISTORY])
            for change in row[HISTORY]:
                entry["fields"][change["field"]] = row.get(change["field"])
    names = row_names(listed, named_by or key)
    for amendment in content.get("amendments", []):
        for change in amendment.get("rows", []):
            named = names.get(str(change.get("row")))
            if named is None:
                continue
            entry = found.setdefault(str(named.get(key)), {"fields": {}, "changes": []})
            for field, after in (change.get("after") or {}).items():
                entry["fields"][field] = named.get(field, after)
                entry["changes"].append(
                    {
                        "field": field,
                        "before": (change.get("before") or {}).get(field),
                        "after": after,
                        "by": amendment.get("by"),
                        "at": amendment.get("at"),
                        "reason": amendment.get("reason"),
                        "version": amendment.get("version"),
                    }
                )
    return found


def carry(
    previous: Artifact | None,
    new_rows: list[dict[str, Any]],
    rows: str,
    key: str,
    named_by: str | None = None,
) -> dict[str, Any] | None:
    """Apply the previous version's reviewer values to `new_rows` (in place), matching
    rows by `key` (stable across drafts) while amendments name them by `named_by`."""
    if previous is None:
        return None
    kept = reviewer_rows(previous.content, rows, key, named_by)
    carried = []
    for row in new_rows:
        entry = kept.get(str(row.get(key)))
        if not entry:
            continue
        row.update(entry["fields"])
        row[HISTORY] = _unique(entry["changes"])
        row["carried_from"] = previous.version
        carried.append({key: row.get(key), "fields": sorted(entry["fields"])})
    return {"from_version": previous.version, "artifact_id": str(previous.id), "rows": carried}


def _unique(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for change in changes:
        mark = tuple(str(change.get(k)) for k in ("field", "version", "at", "after"))
        if mark not in seen:
            seen.add(mark)
            out.append(change)
    return out
