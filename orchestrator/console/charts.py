"""Pictures of a draft, drawn by the server as inline SVG (no script, nothing fetched),
each with its numbers beside it in a table: maturity per domain (current against target),
the SoA's implementation statuses and evidence proposals, POA&M items by severity and by
the month they are due.

Colours come from classes in console.css; every figure is also text in the picture.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from orchestrator.console.draft_tables import dicts
from orchestrator.contracts.artifact_registry import kinds
from orchestrator.contracts.registry import Registry
from orchestrator.contracts.signals import ArtifactKind

WIDTH = 640
LABEL_W = 250
LABEL_CHARS = 36
BAR_H = 16
GAP = 6
NOT_SET = "not set"


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    target: float | None = None


@dataclass(frozen=True)
class Chart:
    title: str
    svg: Markup
    headings: tuple[str, ...]
    rows: list[tuple[Any, ...]]


Draw = Callable[[dict[str, Any]], list[Chart]]
#: Each kind's chart, registered where it is drawn: `@CHARTS.register(kind)`.
CHARTS: Registry[Draw] = Registry("chart", kinds)


def hbars(title: str, bars: list[Bar], top: float | None = None) -> Markup:
    """Horizontal bars, one per label, the value written after each; a target is a tick."""
    top = top or max([b.value for b in bars] + [b.target or 0 for b in bars] + [1])
    span = WIDTH - LABEL_W - 60
    height = len(bars) * (BAR_H + GAP) + GAP
    parts = [_open(title, height)]
    for index, bar in enumerate(bars):
        y = GAP + index * (BAR_H + GAP)
        width = span * bar.value / top
        parts.append(
            f'<text x="{LABEL_W - 6}" y="{y + BAR_H - 4}" text-anchor="end" class="chart-label">'
            f"{escape(_short(bar.label))}</text>"
            f'<rect x="{LABEL_W}" y="{y}" width="{width:.1f}" height="{BAR_H}" class="chart-bar"/>'
            f'<text x="{LABEL_W + width + 4:.1f}" y="{y + BAR_H - 4}" class="chart-value">'
            f"{_number(bar.value)}{'' if bar.target is None else f' / {_number(bar.target)}'}"
            "</text>"
        )
        if bar.target is not None:
            x = LABEL_W + span * bar.target / top
            parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y - 2}" y2="{y + BAR_H + 2}" '
                'class="chart-target"/>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def stacked_columns(
    title: str, columns: list[str], series: list[str], counts: Counter[tuple[str, str]]
) -> Markup:
    """Vertical columns (months), each stacked by series (severity), its total on top."""
    totals = [sum(counts[(c, s)] for s in series) for c in columns]
    top = max(totals + [1])
    plot_h, step = 160, max(24, min(60, (WIDTH - 40) // max(1, len(columns))))
    height = plot_h + 70
    parts = [_open(title, height)]
    for index, column in enumerate(columns):
        x, y = 30 + index * step, float(plot_h + 10)
        for order, name in enumerate(series):
            h = plot_h * counts[(column, name)] / top
            y -= h
            parts.append(
                f'<rect x="{x}" y="{y:.1f}" width="{step - 8}" height="{h:.1f}" '
                f'class="chart-series-{order}"/>'
            )
        parts.append(
            f'<text x="{x + (step - 8) / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle" '
            f'class="chart-value">{totals[index]}</text>'
            f'<text x="{x + (step - 8) / 2:.1f}" y="{plot_h + 26}" text-anchor="middle" '
            f'class="chart-label">{escape(column)}</text>'
        )
    for order, name in enumerate(series):
        x = 30 + order * 130
        parts.append(
            f'<rect x="{x}" y="{plot_h + 40}" width="12" height="12" class="chart-series-{order}"/>'
            f'<text x="{x + 16}" y="{plot_h + 50}" class="chart-label">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _open(title: str, height: float) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0f}" '
        f'width="{WIDTH}" height="{height:.0f}" role="img" class="chart">'
        f"<title>{escape(title)}</title>"
    )


def _short(label: str) -> str:
    """A label that fits left of the bars (the table beside the picture has it whole)."""
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1].rstrip() + "…"


def _number(value: float) -> str:
    return f"{value:g}"


@CHARTS.register(ArtifactKind.MATURITY_ASSESSMENT)
def maturity(content: dict[str, Any]) -> list[Chart]:
    domains = dicts(content.get("domains"))
    if not domains:
        return []
    bars = [
        Bar(
            f"{d.get('domain')} {d.get('name') or ''}".strip(),
            _float(d.get("level")),
            _float(d.get("target")),
        )
        for d in domains
    ]
    title = "Maturity per domain: current level against the target (SP-CMM 0 to 5)"
    rows = [(b.label, _number(b.value), _number(b.target or 0)) for b in bars]
    return [Chart(title, hbars(title, bars, top=5), ("Domain", "Level", "Target"), rows)]


@CHARTS.register(ArtifactKind.SOA)
def statement_of_applicability(content: dict[str, Any]) -> list[Chart]:
    rows = dicts(content.get("requirements"))
    if not rows:
        return []
    statuses = Counter(_status(r) for r in rows)
    proposals = Counter(str(r.get("proposal") or NOT_SET).replace("_", " ") for r in rows)
    return [
        _counted("Implementation status of each requirement", statuses, "Status"),
        _counted("What the evidence proposes", proposals, "Proposal"),
    ]


def _status(row: dict[str, Any]) -> str:
    if row.get("applicable") is False:
        return "not applicable"
    return str(row.get("implementation_status") or NOT_SET).replace("_", " ")


def _counted(title: str, counts: Counter[str], heading: str) -> Chart:
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    bars = [Bar(label, count) for label, count in ordered]
    return Chart(
        title, hbars(title, bars), (heading, "Rows"), [(b.label, int(b.value)) for b in bars]
    )


_SEVERITIES = ("high", "medium", "low")


@CHARTS.register(ArtifactKind.POAM)
def poam(content: dict[str, Any]) -> list[Chart]:
    items = dicts(content.get("items"))
    if not items:
        return []
    severity = Counter(_severity(i) for i in items)
    series = [r for r in _SEVERITIES if severity[r]] + sorted(set(severity) - set(_SEVERITIES))
    due = Counter((_month(i), _severity(i)) for i in items)
    months = sorted({m for m, _ in due})
    title = "POA&M items by the month they are due, by severity"
    rows = [(m, *(due[(m, s)] for s in series), sum(due[(m, s)] for s in series)) for m in months]
    return [
        _counted("POA&M items by severity", severity, "Severity"),
        Chart(title, stacked_columns(title, months, series, due), ("Due", *series, "Items"), rows),
    ]


def _severity(item: dict[str, Any]) -> str:
    return str(item.get("severity") or NOT_SET).strip().lower()


def _month(item: dict[str, Any]) -> str:
    due = str(item.get("scheduled_completion_date") or "")
    return due[:7] if len(due) >= 7 else "no date"


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def charts(kind: str, content: dict[str, Any]) -> list[Chart]:
    """The kind's registered chart (none for most kinds)."""
    draw = CHARTS.get(kind)
    drawn: list[Chart] = draw(content) if draw is not None else []
    return drawn
