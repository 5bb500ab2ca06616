"""What changed from one version of a draft to the next, as an approver reads it.

Rows are matched across versions by the name amendments give them; every field is
compared (owner, dates, statuses, text, citations), not only the columns on the line.
Each changed row says who amended it and why (the new version's amendment), and the
comments people wrote on the previous version come with it: what was discussed, then
what changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from orchestrator.console.draft_pages import natural
from orchestrator.console.draft_tables import TableSpec, named_rows, specs_of
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.service.review_comments import CommentView

#: Bookkeeping, not content: a row's flag that some amendment touched it.
_SKIPPED = frozenset({"amended"})


@dataclass(frozen=True)
class Amended:
    by: str
    at: str
    reason: str


@dataclass
class RowChange:
    name: str
    change: str
    """added, removed or changed."""
    fields: list[tuple[str, Any, Any]] = field(default_factory=list)
    """(heading, before, after) of each changed field."""
    amended: list[Amended] = field(default_factory=list)
    comments: list[CommentView] = field(default_factory=list)
    """Comments on this row in the previous version."""


@dataclass
class TableDiff:
    title: str
    changes: list[RowChange]


@dataclass
class VersionDiff:
    tables: list[TableDiff]
    amendments: list[dict[str, Any]]
    """The amendments that wrote the new version (who, when, why, rows)."""
    comments: list[CommentView]
    """Comments on the previous version not shown beside a changed row."""


def diff(
    kind: ArtifactKind,
    before: dict[str, Any],
    after: dict[str, Any],
    *,
    version: int,
    comments: Sequence[CommentView] = (),
) -> VersionDiff:
    """Rows added, removed or changed from `before` to version `version` (`after`)."""
    amendments = [
        a
        for a in after.get("amendments") or []
        if isinstance(a, dict) and a.get("version") == version
    ]
    by_row = _amended_rows(amendments)
    earlier = [c for c in comments if c.version == version - 1]
    shown: set[int] = set()
    found = []
    for spec in specs_of(kind):
        changes = _table_changes(kind, spec, before, after)
        for change in changes:
            change.amended = by_row.get(change.name, [])
            change.comments = [c for c in earlier if c.row == change.name]
            shown.update(c.id for c in change.comments)
        found.append(TableDiff(spec.title, changes))
    return VersionDiff(found, amendments, [c for c in earlier if c.id not in shown])


def _table_changes(
    kind: ArtifactKind, spec: TableSpec, before: dict[str, Any], after: dict[str, Any]
) -> list[RowChange]:
    old = {r.name: r.row for r in named_rows(kind, spec, before)}
    new = {r.name: r.row for r in named_rows(kind, spec, after)}
    headings = {c.field: c.heading for c in spec.columns}
    changes = [RowChange(name, "added") for name in new if name not in old]
    changes += [RowChange(name, "removed") for name in old if name not in new]
    for name in new.keys() & old.keys():
        fields = [
            (headings.get(f, f.replace("_", " ")), old[name].get(f), new[name].get(f))
            for f in _ordered_fields(spec, old[name], new[name])
            if old[name].get(f) != new[name].get(f)
        ]
        if fields:
            changes.append(RowChange(name, "changed", fields))
    return sorted(changes, key=lambda c: (c.change, natural(c.name)))


def _ordered_fields(spec: TableSpec, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The table's columns first, in their order, then any other field either holds."""
    known = [c.field for c in spec.columns]
    rest = sorted((set(old) | set(new)) - set(known))
    return [f for f in [*known, *rest] if f not in _SKIPPED]


def _amended_rows(amendments: list[dict[str, Any]]) -> dict[str, list[Amended]]:
    found: dict[str, list[Amended]] = {}
    for amendment in amendments:
        who = Amended(
            str(amendment.get("by")), str(amendment.get("at") or ""), str(amendment.get("reason"))
        )
        for row in amendment.get("rows") or []:
            if isinstance(row, dict):
                found.setdefault(str(row.get("row")), []).append(who)
    return found
