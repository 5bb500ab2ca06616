"""Read the official Secure Controls Framework workbook (xlsx) as SCF publishes it.

Pure and database-free: `read_scf_workbook(path)` returns frozen dataclasses holding the
workbook's own text verbatim (outer whitespace trimmed). Columns are found by their header
text, never by position, because SCF releases move columns around; a missing expected column
is reported by name. Mapping columns (one per framework the SCF crosswalks to) become
`MappingLink`s with the requirement id normalised once (whitespace collapsed, "5.1 (a)" is
"5.1(a)").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from python_calamine import CalamineWorkbook

from orchestrator.contracts.errors import FleetError

SP_CMM_LEVELS = 6  # SP-CMM 0 (not performed) to 5 (continuously improving)


class WorkbookFormatError(FleetError, ValueError):
    """The file is not an SCF workbook this reader understands; the message says why."""


@dataclass(frozen=True)
class ScfControl:
    id: str  # "GOV-01.1"
    domain: str  # the domain identifier, "GOV"
    domain_name: str  # "Security & Privacy Governance"
    name: str
    description: str
    question: str
    methods_to_comply: str
    weighting: int | None
    sp_cmm: tuple[str, ...]  # six criteria texts, level 0 to 5 ("" when the cell is empty)
    erl_ids: tuple[str, ...]  # Evidence Request List ids, "E-GOV-01"


@dataclass(frozen=True)
class ScfDomain:
    identifier: str  # "GOV"
    name: str
    principle: str
    intent: str


@dataclass(frozen=True)
class EvidenceRequest:
    erl_id: str
    area_of_focus: str
    artifact: str
    description: str
    control_ids: tuple[str, ...]


@dataclass(frozen=True)
class AuthoritativeSource:
    geography: str
    mapping_column: str  # the header as the sheet writes it, whitespace collapsed
    source: str
    name: str
    version: str
    url: str


@dataclass(frozen=True)
class MappingColumn:
    header: str  # whitespace collapsed: "AICPA TSC 2017 (SOC 2)"
    framework: str  # the same text: the column is the framework as SCF names it
    version: str  # from the header ("v2022" is "2022", "rev5" is "5"), else the source sheet


@dataclass(frozen=True)
class MappingLink:
    framework: str
    version: str
    requirement_id: str  # normalised once: "5.1(a)", "CC6.1", "Art 32.1"
    control_id: str


@dataclass(frozen=True)
class ScfWorkbook:
    release: str  # "2022.3"
    controls: tuple[ScfControl, ...]
    domains: tuple[ScfDomain, ...]
    evidence_requests: tuple[EvidenceRequest, ...]
    authoritative_sources: tuple[AuthoritativeSource, ...]
    mapping_columns: tuple[MappingColumn, ...]
    links: tuple[MappingLink, ...]

    def control(self, control_id: str) -> ScfControl | None:
        return next((c for c in self.controls if c.id == control_id), None)

    def links_for(self, framework: str) -> tuple[MappingLink, ...]:
        return tuple(link for link in self.links if link.framework == framework)


# The main sheet's descriptive columns: field -> accepted header texts (normalised).
_CONTROL_COLUMNS: dict[str, tuple[str, ...]] = {
    "domain_name": ("scf domain",),
    "name": ("scf control",),
    "id": ("scf #",),
    "description": ("secure controls framework (scf) control description",),
    "methods_to_comply": (
        "methods to comply with scf controls",
        "possible solutions & considerations",
    ),
    "erl_ids": ("evidence request list (erl) #",),
    "question": ("scf control question",),
    "weighting": ("relative control weighting",),
}
# Columns after the mapping block: selection tags, risk and threat columns, errata.
_AFTER_MAPPINGS = re.compile(
    r"^(minimum security requirements|identify |scf-[a-z]\b|risk |risk threat summary|"
    r"threat |control threat summary|scf errata)"
)
_SP_CMM = re.compile(r"^(?:sp-cmm|c\|p-cmm) ?([0-5])\b")
_VERSION_IN_HEADER = (
    re.compile(r"\bv(\d[\w.]*)", re.I),
    re.compile(r"\brev ?(\d[\w.]*)", re.I),
    re.compile(r"\b((?:19|20)\d{2})\b"),
)


def read_scf_workbook(path: str | Path) -> ScfWorkbook:
    """Read an SCF workbook; raise WorkbookFormatError naming what is missing."""
    path = Path(path)
    try:
        book = _Book(CalamineWorkbook.from_path(str(path)))
    except Exception as exc:  # the reader raises several types for a file that is not xlsx
        raise WorkbookFormatError(f"{path}: not a readable xlsx workbook ({exc})") from exc
    try:
        main = _main_sheet(book, path)
        release = _release(main.title, path)
        rows = main.iter_rows(values_only=True)
        header = _header(next(rows, ()))
        columns = _Columns(header, main.title, path)
        sources = tuple(_authoritative_sources(book, path))
        mapping_columns = _mapping_columns(header, columns, sources)
        controls: list[ScfControl] = []
        links: list[MappingLink] = []
        for row in rows:
            control = _control(row, columns)
            if control is None:
                continue
            controls.append(control)
            links.extend(_links(row, control.id, mapping_columns))
        if not controls:
            raise WorkbookFormatError(f"{path}: sheet {main.title!r} holds no controls")
        return ScfWorkbook(
            release=release,
            controls=tuple(controls),
            domains=tuple(_domains(book, path)),
            evidence_requests=tuple(_evidence_requests(book, path)),
            authoritative_sources=sources,
            mapping_columns=tuple(column for _, column in mapping_columns),
            links=tuple(links),
        )
    finally:
        book.close()


class _Sheet:
    """One sheet, read when first iterated (the reader needs four of the seven), its cells
    as openpyxl's `values_only` rows give them: an empty cell is None and a whole number an
    int (the workbook's "620" is a requirement id, not 620.0)."""

    def __init__(self, book: CalamineWorkbook, title: str) -> None:
        self.title = title
        self._book = book
        self._rows: list[list[Any]] | None = None

    def iter_rows(
        self, max_row: int | None = None, values_only: bool = True
    ) -> Iterator[tuple[Any, ...]]:
        if self._rows is None:
            sheet = self._book.get_sheet_by_name(self.title)
            self._rows = sheet.to_python(skip_empty_area=False)
        for row in self._rows if max_row is None else self._rows[:max_row]:
            yield tuple(_cell(value) for value in row)


class _Book:
    """The workbook read by calamine (Rust), about 5x faster than openpyxl's read-only
    mode on the SCF workbook, with the same values (tests/catalog/test_scf_workbook.py)."""

    def __init__(self, book: CalamineWorkbook) -> None:
        self._book = book
        self.worksheets = [_Sheet(book, name) for name in book.sheet_names]

    def close(self) -> None:
        self._book.close()


def _cell(value: Any) -> Any:
    if value == "":
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def normalise_requirement_id(raw: Any) -> str:
    """One requirement id as the framework writes it, in one canonical spelling."""
    text = str(raw) if not isinstance(raw, str) else raw
    text = " ".join(text.split())
    return re.sub(r"\s+\(", "(", text)


def collapse(text: Any) -> str:
    """Header or cell text with runs of whitespace (newlines too) made one space."""
    return " ".join(str(text).split()) if text is not None else ""


def _key(text: Any) -> str:
    return collapse(text).lower()


def _header(cells: Sequence[Any]) -> list[str]:
    return [collapse(cell) for cell in cells]


class _Columns:
    """Column positions found by header text."""

    def __init__(self, header: list[str], sheet: str, path: Path) -> None:
        self.header = header
        keys = [h.lower() for h in header]
        self.at: dict[str, int] = {}
        for field, accepted in _CONTROL_COLUMNS.items():
            index = next((i for i, k in enumerate(keys) if k in accepted), None)
            if index is None:
                raise WorkbookFormatError(
                    f"{path}: sheet {sheet!r} has no column {accepted[0]!r} "
                    f"(needed for the control {field.replace('_', ' ')})"
                )
            self.at[field] = index
        levels: dict[int, int] = {}
        for i, k in enumerate(keys):
            match = _SP_CMM.match(k)
            if match and int(match.group(1)) not in levels:
                levels[int(match.group(1))] = i
        missing = [n for n in range(SP_CMM_LEVELS) if n not in levels]
        if missing:
            raise WorkbookFormatError(
                f"{path}: sheet {sheet!r} has no column 'SP-CMM {missing[0]}' "
                "(the maturity criteria for that level)"
            )
        self.sp_cmm = tuple(levels[n] for n in range(SP_CMM_LEVELS))


def _main_sheet(book: Any, path: Path) -> Any:
    for sheet in book.worksheets:
        first = next(sheet.iter_rows(max_row=1, values_only=True), ())
        if "scf #" in {_key(cell) for cell in first}:
            return sheet
    raise WorkbookFormatError(f"{path}: no sheet has an 'SCF #' column; is this the SCF workbook?")


def _release(title: str, path: Path) -> str:
    for text in (title, path.stem):
        match = re.search(r"\b(20\d{2}(?:\.\d+)*)\b", text)
        if match:
            return match.group(1)
    raise WorkbookFormatError(f"{path}: cannot tell the SCF release from {title!r} or the name")


def _text(row: Sequence[Any], index: int) -> str:
    value = row[index] if index < len(row) else None
    return "" if value is None else str(value).strip()


def _lines(value: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in value.splitlines() if line.strip())


def _control(row: Sequence[Any], columns: _Columns) -> ScfControl | None:
    at = columns.at
    control_id = _text(row, at["id"])
    if not control_id:
        return None  # blank or trailing rows
    weighting = _text(row, at["weighting"])
    return ScfControl(
        id=control_id,
        domain=control_id.split("-", 1)[0],
        domain_name=_text(row, at["domain_name"]),
        name=_text(row, at["name"]),
        description=_text(row, at["description"]),
        question=_text(row, at["question"]),
        methods_to_comply=_text(row, at["methods_to_comply"]),
        weighting=int(float(weighting)) if weighting else None,
        sp_cmm=tuple(_text(row, i) for i in columns.sp_cmm),
        erl_ids=_lines(_text(row, at["erl_ids"])),
    )


def _mapping_columns(
    header: list[str], columns: _Columns, sources: tuple[AuthoritativeSource, ...]
) -> list[tuple[int, MappingColumn]]:
    """The framework columns: after the SP-CMM criteria, before the selection tags."""
    by_key = {_loose(s.mapping_column): s for s in sources}
    start = max(columns.sp_cmm) + 1
    found: list[tuple[int, MappingColumn]] = []
    for index in range(start, len(header)):
        text = header[index]
        if not text:
            continue
        if _AFTER_MAPPINGS.match(text.lower()):
            break
        source = by_key.get(_loose(text))
        found.append(
            (index, MappingColumn(header=text, framework=text, version=_version(text, source)))
        )
    return found


def _loose(text: str) -> str:
    # The sources sheet writes "(low)" as "[low]" and drops some spaces and punctuation.
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _version(header: str, source: AuthoritativeSource | None) -> str:
    for pattern in _VERSION_IN_HEADER:
        match = pattern.search(header)
        if match:
            return match.group(1)
    if source is not None and source.version.upper() != "N/A":
        return source.version
    return ""


def _links(
    row: Sequence[Any], control_id: str, mapping_columns: list[tuple[int, MappingColumn]]
) -> Iterator[MappingLink]:
    for index, column in mapping_columns:
        value = row[index] if index < len(row) else None
        if value is None:
            continue
        seen: set[str] = set()
        for line in str(value).splitlines():
            requirement = normalise_requirement_id(line)
            if requirement and requirement not in seen:
                seen.add(requirement)
                yield MappingLink(
                    framework=column.framework,
                    version=column.version,
                    requirement_id=requirement,
                    control_id=control_id,
                )


def _sheet(book: Any, prefix: str, path: Path) -> Any:
    for sheet in book.worksheets:
        if sheet.title.lower().startswith(prefix.lower()):
            return sheet
    raise WorkbookFormatError(f"{path}: no sheet named {prefix!r}…")


def _table(book: Any, prefix: str, wanted: dict[str, str], path: Path) -> Iterator[dict[str, str]]:
    """Rows of a side sheet as {field: text}, columns found by header prefix."""
    sheet = _sheet(book, prefix, path)
    rows: Iterable[Sequence[Any]] = sheet.iter_rows(values_only=True)
    iterator = iter(rows)
    keys = [_key(cell) for cell in next(iterator, ())]
    at: dict[str, int] = {}
    for field, header in wanted.items():
        index = next((i for i, k in enumerate(keys) if k.startswith(header)), None)
        if index is None:
            raise WorkbookFormatError(f"{path}: sheet {sheet.title!r} has no column {header!r}")
        at[field] = index
    for row in iterator:
        record = {field: _text(row, index) for field, index in at.items()}
        if any(record.values()):
            yield record


def _domains(book: Any, path: Path) -> Iterator[ScfDomain]:
    wanted = {
        "name": "scf domain",
        "identifier": "scf identifier",
        "principle": "security & privacy by design",
        "intent": "principle intent",
    }
    for record in _table(book, "Domains & Principles", wanted, path):
        if record["identifier"]:
            yield ScfDomain(**record)


def _evidence_requests(book: Any, path: Path) -> Iterator[EvidenceRequest]:
    wanted = {
        "erl_id": "erl #",
        "area_of_focus": "area of focus",
        "artifact": "documentation artifact",
        "description": "artifact description",
        "controls": "scf control mappings",
    }
    for record in _table(book, "Evidence Request List", wanted, path):
        if record["erl_id"]:
            yield EvidenceRequest(
                erl_id=record["erl_id"],
                area_of_focus=record["area_of_focus"],
                artifact=record["artifact"],
                description=record["description"],
                control_ids=_lines(record["controls"]),
            )


def _authoritative_sources(book: Any, path: Path) -> Iterator[AuthoritativeSource]:
    wanted = {
        "geography": "geography",
        "mapping_column": "mapping column header",
        "source": "source",
        "name": "authoritative source",
        "version": "version",
        "url": "url",
    }
    for record in _table(book, "Authoritative Sources", wanted, path):
        if record["mapping_column"]:
            yield AuthoritativeSource(
                **{
                    **record,
                    "mapping_column": collapse(record["mapping_column"]),
                    "version": collapse(record["version"]),
                }
            )
