"""The rows of a draft people amend: where each kind keeps them, and the names reviewers
give them (a row's key, or "<framework> <key>" where two selected frameworks share it)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from orchestrator.contracts.artifact_registry import Rows, declaration, declared


def rows_of(kind: str) -> Rows | None:
    """Where an amendable draft keeps its rows and the field that names a row; None for
    kinds people do not amend (declared in orchestrator.contracts.artifact_registry)."""
    found = declaration(kind)
    return found.rows if found is not None else None


def rows_in(kind: str) -> Rows:
    """`rows_of` for a kind the caller knows is amendable."""
    found = rows_of(kind)
    if found is None:
        raise LookupError(f"{kind} has no rows people amend")
    return found


def amendable_kinds() -> list[str]:
    return [d.kind for d in declared() if d.rows is not None]


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
    """The shortest name that finds `row` among `rows` (one row; `names_of` names them all)."""
    plain = str(row.get(key))
    unique = sum(1 for other in rows if str(other.get(key)) == plain) == 1
    return plain if unique or not row.get("framework") else f"{row['framework']} {plain}"


def names_of(rows: list[dict[str, Any]], key: str) -> list[str]:
    """`row_name` of each of `rows`, in their order, in one pass over them (a 1,090-row
    SoA named row by row is over a million comparisons)."""
    plains = [str(row.get(key)) for row in rows]
    counts = Counter(plains)
    return [
        plain if counts[plain] == 1 or not row.get("framework") else f"{row['framework']} {plain}"
        for plain, row in zip(plains, rows, strict=True)
    ]
