"""The assessment report as one standalone HTML page. Every value is escaped."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

Content = dict[str, Any]

SECTIONS: tuple[tuple[str, str], ...] = (
    ("summary", "Summary"),
    ("scope", "Scope"),
    ("soa", "Statement of Applicability"),
    ("gaps", "Gaps"),
    ("maturity", "Maturity by domain"),
    ("poam", "Plan of Action & Milestones"),
    ("evidence", "Evidence citations"),
)

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:72rem;color:#1b1f24}
table{border-collapse:collapse;width:100%;margin:1rem 0}
th,td{border:1px solid #c8ccd1;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f4}.muted{color:#5c6670}blockquote{margin:.25rem 0 .75rem 1rem}
"""


@dataclass(frozen=True)
class ReportInput:
    title: str
    assessment_name: str
    as_of: str
    soa: Content
    gaps: Content
    maturity: Content
    poam: Content
    scope: Content = field(default_factory=dict)
    evidence: Content = field(default_factory=dict)


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_report_html(report: ReportInput) -> str:
    renderers = {
        "summary": _summary,
        "scope": _scope,
        "soa": _soa,
        "gaps": _gaps,
        "maturity": _maturity,
        "poam": _poam,
        "evidence": _evidence,
    }
    sections = "".join(
        f'<section id="{key}"><h2>{esc(heading)}</h2>{renderers[key](report)}</section>'
        for key, heading in SECTIONS
    )
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{esc(report.title)}</title>'
        f"<style>{_STYLE}</style></head><body><h1>{esc(report.title)}</h1>"
        f'<p class="muted">Assessment: {esc(report.assessment_name)}. '
        f"Prepared from the artifacts as of {esc(report.as_of)}.</p>"
        f"{sections}</body></html>\n"
    )


def summary_rows(report: ReportInput) -> list[tuple[str, Any]]:
    """The headline figures, shared by every rendering of the report."""
    soa, gaps = report.soa.get("summary", {}), report.gaps.get("summary", {})
    return [
        ("Framework", report.soa.get("framework", report.scope.get("framework", "SCF"))),
        ("Controls in scope", soa.get("controls", 0)),
        ("Applicable controls", soa.get("applicable", 0)),
        ("Controls with evidence", gaps.get("met", 0)),
        (
            "Gaps (high / medium / low)",
            f"{gaps.get('gaps', 0)} ({gaps.get('high', 0)} / {gaps.get('medium', 0)} / "
            f"{gaps.get('low', 0)})",
        ),
        ("Overall maturity (0-5)", report.maturity.get("overall_level", "n/a")),
        ("POA&M items", len(report.poam.get("items", []))),
        *_catalogue_rows(report),
    ]


def _catalogue_rows(report: ReportInput) -> list[tuple[str, Any]]:
    """The catalogue version the assessment used and the attribution its licence requires."""
    catalog = report.soa.get("catalog") or report.scope.get("catalog")
    if not isinstance(catalog, dict):
        return []
    return [
        ("Control catalogue", f"{catalog.get('name')} {catalog.get('version')}"),
        ("Attribution", catalog.get("attribution", "")),
    ]


def _summary(report: ReportInput) -> str:
    return table(("Figure", "Value"), summary_rows(report))


def _scope(report: ReportInput) -> str:
    if not report.scope:
        return '<p class="muted">No scope artifact.</p>'
    in_scope = table(
        ("Domain", "Name", "Controls"),
        (
            (d.get("domain"), d.get("name"), len(d.get("controls", [])))
            for d in report.scope.get("domains", [])
        ),
    )
    out = report.scope.get("out_of_scope", [])
    excluded = (
        (
            "<p>Out of scope: "
            + esc(", ".join(f"{d.get('domain')} {d.get('name')}" for d in out))
            + "</p>"
        )
        if out
        else ""
    )
    return in_scope + excluded


def _soa(report: ReportInput) -> str:
    return table(
        ("Control", "Title", "Applicable", "Justification"),
        (
            (
                c.get("control_id"),
                c.get("title"),
                "Yes" if c.get("applicable") else "No",
                c.get("justification"),
            )
            for c in report.soa.get("controls", [])
        ),
    )


def _gaps(report: ReportInput) -> str:
    gaps = report.gaps.get("gaps", [])
    if not gaps:
        return "<p>No gaps: every applicable control has evidence.</p>"
    return table(
        ("Control", "Title", "Severity", "Best score", "Finding"),
        (
            (
                g.get("control_id"),
                g.get("title"),
                g.get("severity"),
                f"{float(g.get('best_score', 0.0)):.2f}",
                g.get("finding"),
            )
            for g in gaps
        ),
    )


def _maturity(report: ReportInput) -> str:
    return table(
        ("Domain", "Name", "Level", "Label", "Rationale"),
        (
            (d.get("domain"), d.get("name"), d.get("level"), d.get("label"), d.get("rationale"))
            for d in report.maturity.get("domains", [])
        ),
    )


def _poam(report: ReportInput) -> str:
    items = report.poam.get("items", [])
    if not items:
        return "<p>No action items.</p>"
    return table(
        [title for _, title in POAM_COLUMNS],
        ([item.get(key) for key, _ in POAM_COLUMNS] for item in items),
    )


def supporting(control: Content) -> list[Content]:
    # Evidence rows (passages a proposal rests on); older drafts listed `citations`.
    if "evidence" in control:
        return list(control.get("evidence") or [])
    return [c for c in control.get("citations") or [] if c.get("supports", True)]


def page_label(cite: Content) -> str:
    first, last = cite.get("page_start"), cite.get("page_end")
    if not first:
        return ""
    return f"p. {first}" if not last or last == first else f"pp. {first}-{last}"


POAM_COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "Id"),
    ("control_id", "Control"),
    ("weakness", "Weakness"),
    ("remediation", "Remediation"),
    ("priority", "Priority"),
    ("milestone_date", "Milestone"),
    ("owner_role", "Owner"),
)


def _evidence(report: ReportInput) -> str:
    controls = [c for c in report.evidence.get("controls", []) if supporting(c)]
    if not controls:
        return '<p class="muted">No evidence citations.</p>'
    parts = []
    for control in controls:
        parts.append(f"<h3>{esc(control.get('control_id'))} {esc(control.get('title'))}</h3>")
        for cite in supporting(control):
            where = esc(cite.get("filename"))
            if cite.get("heading_path"):
                where += f" &rsaquo; {esc(cite.get('heading_path'))}"
            if cite.get("page_start"):
                where += f", {esc(page_label(cite))}"
            parts.append(
                f"<p><strong>{where}</strong> "
                f'<span class="muted">(score {float(cite.get("score", 0.0)):.2f})'
                f"</span></p><blockquote>{esc(cite.get('excerpt'))}</blockquote>"
            )
    return "".join(parts)
