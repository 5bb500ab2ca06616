"""One page of one draft table: filtered, sorted and paged on the server.

Each table reads its own query parameters, prefixed by its slug (`requirements.page=2`,
`requirements.status=-`, `requirements.q=backup`), so a link or form of one table keeps
the others as they were. Filters are `orchestrator.service.row_filter`'s: the same filter
selects the rows a bulk amendment changes ("apply to every row matching the filter").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from orchestrator.console.draft_tables import NamedRow, TableSpec, named_rows, with_decisions
from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.service.readiness import undecided_rows
from orchestrator.service.row_filter import matching_rows, select_rows

SIZES = (25, 50, 100, 200)
DEFAULT_SIZE = 50
NONE = "-"
"""The filter value for "not set"."""
_PARAMS = ("page", "size", "sort", "order", "q", "undecided")


@dataclass(frozen=True)
class TableQuery:
    page: int = 1
    size: int = DEFAULT_SIZE
    sort: str | None = None
    descending: bool = False
    chosen: Mapping[str, str] = field(default_factory=dict)
    """Facet parameter -> the value chosen (NONE: not set)."""
    text: str = ""
    undecided: bool = False

    def params(self, spec: TableSpec, **changes: Any) -> dict[str, str]:
        """This table's query parameters, with `changes` (the page link, a sort)."""
        values: dict[str, Any] = {
            "page": self.page,
            "size": self.size,
            "sort": self.sort,
            "order": "desc" if self.descending else None,
            "q": self.text,
            "undecided": "1" if self.undecided else None,
            **self.chosen,
            **changes,
        }
        defaults = {"page": 1, "size": DEFAULT_SIZE}
        return {
            f"{spec.slug}.{name}": str(value)
            for name, value in values.items()
            if value not in (None, "") and defaults.get(name) != value
        }


def read_query(spec: TableSpec, query: Mapping[str, str]) -> TableQuery:
    def get(name: str) -> str:
        return str(query.get(f"{spec.slug}.{name}") or "").strip()

    size = _int(get("size"), DEFAULT_SIZE)
    sort = get("sort")
    return TableQuery(
        page=max(1, _int(get("page"), 1)),
        size=size if size in SIZES else DEFAULT_SIZE,
        sort=sort if sort in {c.field for c in spec.line} else None,
        descending=get("order") == "desc",
        chosen={f.param: get(f.param) for f in spec.facets if get(f.param)},
        text=get("q")[:200],
        undecided=spec.decided and get("undecided") == "1",
    )


def _int(text: str, default: int) -> int:
    return int(text) if text.isdigit() else default


@dataclass(frozen=True)
class FacetOptions:
    param: str
    label: str
    chosen: str
    options: list[tuple[str, str]]
    """(value, label) pairs: the values the table's rows hold, NONE for "not set"."""


@dataclass
class TablePage:
    spec: TableSpec
    query: TableQuery
    total: int
    rows: list[NamedRow]
    matched: int
    facets: list[FacetOptions]
    undecided: set[str]
    filter: dict[str, Any] | None
    """The row filter this page applies (None: every row), for a bulk amendment."""
    problem: str | None = None

    @property
    def pages(self) -> int:
        return max(1, -(-self.matched // self.query.size))

    @property
    def first(self) -> int:
        return (self.query.page - 1) * self.query.size + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1 if self.rows else 0

    def link(self, base: Mapping[str, str], **changes: Any) -> str:
        """A link to this table with `changes`, the other tables' parameters kept."""
        mine = f"{self.spec.slug}."
        kept = {k: v for k, v in base.items() if not k.startswith(mine)}
        return "?" + urlencode({**kept, **self.query.params(self.spec, **changes)})

    def cleared(self, base: Mapping[str, str]) -> str:
        """A link to this table without its filters, sort and page."""
        return "?" + urlencode(self.kept(base))

    @property
    def sizes(self) -> tuple[int, ...]:
        return SIZES

    def kept(self, base: Mapping[str, str]) -> dict[str, str]:
        """The parameters a form of this table carries as hidden fields (the others')."""
        mine = f"{self.spec.slug}."
        return {k: v for k, v in base.items() if not k.startswith(mine)}


def table_page(
    kind: ArtifactKind, spec: TableSpec, content: dict[str, Any], query: TableQuery
) -> TablePage:
    named = named_rows(kind, spec, content)
    undecided = set(undecided_rows(kind, content)) if spec.decided else set()
    wanted = _filter(spec, named, query)
    problem = None
    try:
        matched = _select(kind, spec, content, named, wanted)
    except InvalidInput as error:
        matched, problem = named, error.message
    ordered = _sorted(matched, query)
    query = replace(query, page=min(query.page, max(1, -(-len(ordered) // query.size))))
    start = (query.page - 1) * query.size
    return TablePage(
        spec=spec,
        query=query,
        total=len(named),
        rows=with_decisions(kind, spec, content, ordered[start : start + query.size]),
        matched=len(ordered),
        facets=_facets(spec, named, query),
        undecided=undecided,
        filter=wanted,
        problem=problem,
    )


def _filter(spec: TableSpec, named: list[NamedRow], query: TableQuery) -> dict[str, Any] | None:
    wanted: dict[str, Any] = {}
    for facet in spec.facets:
        chosen = query.chosen.get(facet.param)
        if chosen:
            wanted[facet.field] = None if chosen == NONE else _typed(named, facet.field, chosen)
    if query.text:
        wanted["text"] = query.text
    if query.undecided:
        wanted["undecided"] = True
    return wanted or None


def _typed(named: list[NamedRow], name: str, chosen: str) -> Any:
    """The value as rows hold it (a level is a number, an applicability a boolean)."""
    for entry in named:
        value = entry.row.get(name)
        if value is not None and not isinstance(value, list | dict) and str(value) == chosen:
            return value
    return chosen


def _select(
    kind: ArtifactKind,
    spec: TableSpec,
    content: dict[str, Any],
    named: list[NamedRow],
    wanted: dict[str, Any] | None,
) -> list[NamedRow]:
    if wanted is None:
        return named
    if spec.decided:
        picked = {id(row) for row in matching_rows(kind, content, wanted)}
    else:
        picked = {id(row) for row in select_rows([n.row for n in named], wanted)}
    return [n for n in named if id(n.row) in picked]


def _sorted(rows: list[NamedRow], query: TableQuery) -> list[NamedRow]:
    if query.sort is None:
        return rows
    name = query.sort
    present = [r for r in rows if _blank(r.row.get(name)) is False]
    absent = [r for r in rows if _blank(r.row.get(name))]
    present.sort(key=lambda r: natural(r.row.get(name)), reverse=query.descending)
    return present + absent  # rows without the value last, whichever the order


def _blank(value: Any) -> bool:
    return value is None or value == "" or value == []


_DIGITS = re.compile(r"(\d+)")


def natural(value: Any) -> tuple[Any, ...]:
    """CC1.10 after CC1.9; numbers by value; booleans and text as text."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        text = str(value).casefold()
        return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in _DIGITS.split(text))
    return ((0, value, ""),)


def _facets(spec: TableSpec, named: list[NamedRow], query: TableQuery) -> list[FacetOptions]:
    found = []
    for facet in spec.facets:
        values = _values(named, facet.field)
        chosen = query.chosen.get(facet.param, "")
        if len(values) < 2 and not chosen:
            continue  # nothing to choose between
        found.append(FacetOptions(facet.param, facet.label, chosen, values))
    return found


def _values(named: list[NamedRow], name: str) -> list[tuple[str, str]]:
    if name == "domain":
        seen = sorted({d for n in named for d in _domains(n.row)})
        return [(d, d) for d in seen]
    held = {_label(n.row.get(name)) for n in named}
    options = sorted((v for v in held if v is not None), key=natural)
    if None in held:
        options.append(NONE)
    return [(v, "not set" if v == NONE else v.replace("_", " ")) for v in options]


def _label(value: Any) -> str | None:
    if _blank(value):
        return None
    if isinstance(value, list | dict):
        return None
    return str(value)


def _domains(row: dict[str, Any]) -> set[str]:
    controls = row.get("scf_controls") or [row.get("control_id")]
    return {str(c).split("-")[0].upper() for c in controls if c and "-" in str(c)}
