"""The report's two charts as figures: maturity per domain (the maturity draft's level of
each domain, 0-5) and status per framework (the SoA's rows of each framework counted by
implementation status). Every rendering (HTML, PDF, DOCX, JSON) draws or lists these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workers.soa_content import soa_rows

Content = dict[str, Any]

#: Implementation statuses in the order a bar stacks them, each with its label and colour.
STATUSES: tuple[tuple[str, str, str], ...] = (
    ("implemented", "Implemented", "#2e7d32"),
    ("partially_implemented", "Partially implemented", "#f9a825"),
    ("not_implemented", "Not implemented", "#c62828"),
    ("not_applicable", "Not applicable", "#9e9e9e"),
    ("not_assessed", "Not yet assessed", "#78909c"),
)
MATURITY_COLOUR = "#1565c0"
MATURITY_TOP = 5


@dataclass(frozen=True)
class Segment:
    key: str
    label: str
    value: int
    colour: str


@dataclass(frozen=True)
class Bar:
    label: str
    """What the bar is of: a domain ("AST Asset Management") or a framework."""
    segments: tuple[Segment, ...]

    @property
    def total(self) -> int:
        return sum(s.value for s in self.segments)


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    scale: int
    """The value the full bar width stands for."""
    bars: tuple[Bar, ...]
    legend: tuple[tuple[str, str], ...]
    """(label, colour) per kind of segment."""
    value_header: str


def maturity_chart(maturity: Content) -> Chart:
    bars = tuple(
        Bar(
            f"{d.get('domain') or ''} {d.get('name') or ''}".strip(),
            (Segment("level", "Level", _level(d.get("level")), MATURITY_COLOUR),),
        )
        for d in maturity.get("domains", [])
        if isinstance(d, dict)
    )
    scale = max([MATURITY_TOP, *(b.total for b in bars)])
    return Chart(
        "maturity_by_domain",
        "Maturity per domain (0-5)",
        scale,
        bars,
        (("Level", MATURITY_COLOUR),),
        "Level",
    )


def row_status(row: Content) -> str:
    """A row's status: what a reviewer set, else what was proposed; a row out of scope is
    not applicable whatever it says."""
    if row.get("applicable") is False:
        return "not_applicable"
    status = row.get("implementation_status") or row.get("proposed_implementation_status")
    return str(status) if status in {key for key, _, _ in STATUSES} else "not_assessed"


def status_chart(soa: Content) -> Chart:
    counts: dict[str, dict[str, int]] = {}
    for row in soa_rows(soa):
        framework = str(row.get("framework") or soa.get("framework") or "SCF")
        per = counts.setdefault(framework, {key: 0 for key, _, _ in STATUSES})
        per[row_status(row)] += 1
    bars = tuple(
        Bar(
            framework,
            tuple(Segment(key, label, per[key], colour) for key, label, colour in STATUSES),
        )
        for framework, per in counts.items()
    )
    return Chart(
        "status_by_framework",
        "Status per framework (requirements: a reviewer's status, else the proposed one)",
        max([1, *(b.total for b in bars)]),
        bars,
        tuple((label, colour) for _, label, colour in STATUSES),
        "Requirements",
    )


def report_charts(soa: Content, maturity: Content) -> tuple[Chart, Chart]:
    return maturity_chart(maturity), status_chart(soa)


def chart_record(chart: Chart) -> list[dict[str, Any]]:
    """The chart's figures as the JSON report lists them: per bar, its value per segment."""
    return [
        {"label": bar.label, **{s.key: s.value for s in bar.segments}, "total": bar.total}
        for bar in chart.bars
    ]


def chart_table(chart: Chart) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    """The chart's figures as a table (headers, rows): beside an image, and for readers
    who cannot see it."""
    if len(chart.legend) == 1:
        return ("", chart.value_header), [(bar.label, bar.total) for bar in chart.bars]
    headers = ("", *(label for label, _ in chart.legend), "Total")
    return headers, [(bar.label, *(s.value for s in bar.segments), bar.total) for bar in chart.bars]


def _level(value: Any) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0
