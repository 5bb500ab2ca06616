"""Who decided each row's status of a draft, and how: one by one, or in one action that
set it on many rows at once (an amendment entry with a `filter` or a list of `rows`).

Read from the draft's amendment records only (orchestrator.service.amendments): each
records the rows it changed, who, when and why, and each selection of many rows with the
names it selected. A selection recorded before the names were kept is matched by the
values it set. A row whose status was carried from an earlier version says so.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from orchestrator.service.amendments import STATUS_FIELDS
from orchestrator.service.draft_rows import names_of, rows_in

#: How a decision's row was named: alone, or in a selection of many rows.
ONE_BY_ONE = "one_by_one"
IN_BULK = "in_bulk"


@dataclass(frozen=True)
class Decision:
    """The last amendment that set a row's status."""

    row: str
    status: str
    by: str
    at: str
    version: int
    reason: str
    how: str
    """ONE_BY_ONE or IN_BULK."""
    rows_in_action: int
    """How many rows the action that set it selected (1: this row alone)."""
    selector: str
    """`row`, `rows` or `filter`: how the action named its rows."""

    def label(self) -> str:
        if self.how == IN_BULK:
            return (
                f"in bulk by {self.by}, {self.at}: one {self.selector} action set "
                f"{self.rows_in_action} rows (version {self.version})"
            )
        return f"one by one by {self.by}, {self.at} (version {self.version})"


@dataclass(frozen=True)
class BulkAction:
    """One amendment entry that set a status on many rows at once."""

    version: int
    by: str
    at: str
    reason: str
    rows: int
    selector: str
    selection: Any
    """The filter, or the list of row names, as the reviewer gave it."""
    changes: dict[str, Any]

    def label(self) -> str:
        set_to = ", ".join(f"{k} = {v}" for k, v in self.changes.items() if k in STATUS_FIELDS)
        return (
            f"{self.by}, {self.at}: {self.rows} rows in one action ({self.selector}), "
            f"{set_to} (version {self.version}): {self.reason}"
        )


def status_decisions(content: dict[str, Any]) -> dict[str, Decision]:
    """Per row name (the shortest that finds it), the last amendment setting its status."""
    decided: dict[str, Decision] = {}
    for amendment in content.get("amendments", []):
        selections = [s for s in amendment.get("selections", []) if _sets_status(s)]
        for change in amendment.get("rows", []):
            after = change.get("after") or {}
            status = next((str(after[f]) for f in STATUS_FIELDS if f in after), None)
            if status is None:
                continue
            name = str(change.get("row"))
            selection = _selection_of(name, after, selections)
            picked = int(selection.get("selected") or 0) if selection else 1
            decided[name] = Decision(
                row=name,
                status=status,
                by=str(amendment.get("by")),
                at=str(amendment.get("at")),
                version=int(amendment.get("version") or 0),
                reason=str(amendment.get("reason") or ""),
                how=IN_BULK if picked > 1 else ONE_BY_ONE,
                rows_in_action=picked,
                selector=_selector(selection),
            )
    return decided


def bulk_actions(content: dict[str, Any]) -> list[BulkAction]:
    """Every action that set a status on more than one row, oldest first."""
    found: list[BulkAction] = []
    for amendment in content.get("amendments", []):
        for selection in amendment.get("selections", []):
            if not _sets_status(selection) or int(selection.get("selected") or 0) < 2:
                continue
            selector = _selector(selection)
            found.append(
                BulkAction(
                    version=int(amendment.get("version") or 0),
                    by=str(amendment.get("by")),
                    at=str(amendment.get("at")),
                    reason=str(amendment.get("reason") or ""),
                    rows=int(selection["selected"]),
                    selector=selector,
                    selection=selection.get(selector),
                    changes=dict(selection.get("changes") or {}),
                )
            )
    return found


def row_decision_labels(kind: str, content: dict[str, Any]) -> dict[str, str]:
    """For each row of the draft, by its name, in order: how its status was decided."""
    list_name, key = rows_in(kind)
    rows = [r for r in content.get(list_name, []) if isinstance(r, dict)]
    decided = status_decisions(content)
    labels = {}
    for name, row in zip(names_of(rows, key), rows, strict=True):
        decision = decided.get(name)
        if decision is not None:
            labels[name] = decision.label()
        elif row.get("carried_from") and any(row.get(f) for f in STATUS_FIELDS):
            labels[name] = f"carried from the approved version {row['carried_from']}"
        else:
            labels[name] = "not decided by a person"
    return labels


def decision_lines(content: dict[str, Any]) -> list[str]:
    """In words, for a draft's readers: how many statuses people decided one by one and in
    bulk, then each action that set a status on many rows at once (none: no line)."""
    decided = list(status_decisions(content).values())
    if not decided:
        return []
    single = sum(1 for d in decided if d.how == ONE_BY_ONE)
    actions = bulk_actions(content)
    many = "action that set" if len(actions) == 1 else "actions that each set"
    lines = [
        f"Statuses decided by a person: {len(decided)} rows, {single} one by one and "
        f"{len(decided) - single} in bulk ({len(actions)} {many} many rows at once)."
    ]
    return lines + [f"Bulk action: {action.label()}" for action in actions]


def decisions_record(kind: str, content: dict[str, Any]) -> dict[str, Any]:
    """The decisions as exports record them: counts, the bulk actions and each row's."""
    decided = status_decisions(content)
    return {
        "decided_one_by_one": sum(1 for d in decided.values() if d.how == ONE_BY_ONE),
        "decided_in_bulk": sum(1 for d in decided.values() if d.how == IN_BULK),
        "bulk_actions": [asdict(a) for a in bulk_actions(content)],
        "rows": [asdict(d) for d in decided.values()],
    }


def _sets_status(selection: dict[str, Any]) -> bool:
    return any(f in (selection.get("changes") or {}) for f in STATUS_FIELDS)


def _selection_of(
    name: str, after: dict[str, Any], selections: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The last selection that set this row's status to what it became."""
    for selection in reversed(selections):
        changes = selection.get("changes") or {}
        same = all(after.get(f) == changes[f] for f in STATUS_FIELDS if f in changes)
        named = selection.get("names")
        if same and (name in named if isinstance(named, list) else True):
            return selection
    return None


def _selector(selection: dict[str, Any] | None) -> str:
    if selection is None:
        return "row"
    return "filter" if "filter" in selection else "rows"
