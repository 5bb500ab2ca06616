"""Selecting rows of a draft by what they hold: for bulk amendments ("every undecided row
the evidence proposes implemented") and for reading big drafts page by page.

A filter is an object; every key must hold for a row (AND):
- a row field (`framework`, `category`, `proposal`, `proposed_implementation_status`,
  `implementation_status`, `assessed_status`, `applicable`, `owner`, `proposed_owner`,
  `severity`,
  `priority`, `excluded_by`, and in other tables `status`, `evidence_state`, `coverage`,
  `level`, `kind`, `adoption`): equal to the value, to any value of a list, or empty for
  null;
- `domain`: an SCF domain (`IAC`) one of the row's SCF controls is in (or a list of them);
- `text`: words found in the row's id, title or justification (case-insensitive; also a
  document's file name, a domain's code and name);
- `undecided`: true for the rows nobody decided yet (`orchestrator.service.readiness`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.contracts.errors import InvalidInput
from orchestrator.service.draft_rows import names_of, row_name, rows_in
from orchestrator.service.readiness import undecided_rows

FIELDS = frozenset(
    {
        "framework",
        "category",
        "proposal",
        "proposed_implementation_status",
        "implementation_status",
        "assessed_status",
        "applicable",
        "owner",
        "proposed_owner",
        "severity",
        "priority",
        "excluded_by",
        # Fields of the other tables a reviewer reads (evidence, gaps met, maturity, POA&M).
        "status",
        "evidence_state",
        "coverage",
        "level",
        "kind",
        "adoption",
    }
)
SPECIAL = frozenset({"domain", "text", "undecided"})
_SCALARS = (str, int, float, bool)


def matching_rows(kind: str, content: dict[str, Any], wanted: Any) -> list[dict[str, Any]]:
    """The rows of `content` the filter selects, in their order; refuses a malformed one."""
    tests = _tests(wanted, lambda value: _undecided(kind, content, value))
    list_name, _ = rows_in(kind)
    rows = [r for r in content.get(list_name, []) if isinstance(r, dict)]
    return [row for row in rows if all(test(row) for test in tests)]


def select_rows(rows: list[dict[str, Any]], wanted: Any) -> list[dict[str, Any]]:
    """The same filter over any list of rows (a draft's other tables), but `undecided`,
    which only the rows people decide have."""
    tests = _tests(wanted, _no_decisions)
    return [row for row in rows if all(test(row) for test in tests)]


def _no_decisions(_: Any) -> Callable[[dict[str, Any]], bool]:
    raise InvalidInput("filter undecided applies to the rows people decide, not this table")


def _tests(
    wanted: Any, undecided: Callable[[Any], Callable[[dict[str, Any]], bool]]
) -> list[Callable[[dict[str, Any]], bool]]:
    if not isinstance(wanted, dict) or not wanted:
        raise InvalidInput("a filter is a non-empty object of row fields and values")
    unknown = sorted(set(wanted) - FIELDS - SPECIAL)
    if unknown:
        raise InvalidInput(
            f"cannot filter by {', '.join(unknown)}; filters: {', '.join(sorted(FIELDS | SPECIAL))}"
        )
    tests: list[Callable[[dict[str, Any]], bool]] = []
    for name, value in wanted.items():
        if name == "undecided":
            tests.append(undecided(value))
        elif name == "text":
            tests.append(_text(value))
        elif name == "domain":
            tests.append(_domain(_values(name, value)))
        else:
            tests.append(_equals(name, _values(name, value)))
    return tests


def _values(name: str, value: Any) -> list[Any]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(v is None or isinstance(v, _SCALARS) for v in values):
        raise InvalidInput(f"filter {name} takes a value, null, or a non-empty list of values")
    return values


def _equals(name: str, values: list[Any]) -> Callable[[dict[str, Any]], bool]:
    def test(row: dict[str, Any]) -> bool:
        held = row.get(name)
        held = None if held == "" else held
        return any(held == v if v is not None else held is None for v in values)

    return test


def _domain(domains: list[Any]) -> Callable[[dict[str, Any]], bool]:
    prefixes = tuple(f"{str(d).upper()}-" for d in domains)

    def test(row: dict[str, Any]) -> bool:
        controls = row.get("scf_controls") or [row.get("control_id")]
        return any(str(c).upper().startswith(prefixes) for c in controls if c)

    return test


def _text(value: Any) -> Callable[[dict[str, Any]], bool]:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("filter text takes words to look for")
    words = value.lower().split()

    def test(row: dict[str, Any]) -> bool:
        keys = (
            *("requirement_id", "control_id", "id", "title", "weakness_name", "justification"),
            *("requirement", "filename", "domain", "name"),
        )
        haystack = " ".join(str(row.get(k) or "") for k in keys).lower()
        return all(word in haystack for word in words)

    return test


def _undecided(kind: str, content: dict[str, Any], value: Any) -> Callable[[dict[str, Any]], bool]:
    if not isinstance(value, bool):
        raise InvalidInput("filter undecided takes true or false")
    list_name, key = rows_in(kind)
    rows = [r for r in content.get(list_name, []) if isinstance(r, dict)]
    open_rows = set(undecided_rows(kind, content))
    names = {id(row): name for row, name in zip(rows, names_of(rows, key), strict=True)}

    def test(row: dict[str, Any]) -> bool:
        name = names.get(id(row))
        return ((row_name(rows, key, row) if name is None else name) in open_rows) is value

    return test
