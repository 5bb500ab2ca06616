"""The assessment report as PDF (ReportLab, pure Python): the sections of the HTML report,
with a page footer. Every value is escaped; output bytes are deterministic."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from workers.reporting.render import (
    POAM_COLUMNS,
    ReportInput,
    page_label,
    summary_rows,
    supporting,
)

_FONT = "ReportSans"


@lru_cache(maxsize=1)
def _fonts() -> tuple[str, str]:
    """ReportLab's bundled Vera TrueType fonts cover far more than Latin-1 (the standard
    Helvetica does not); fall back to Helvetica if they are missing."""
    import reportlab
    from reportlab.lib.fonts import addMapping
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    folder = Path(reportlab.__file__).parent / "fonts"
    regular, bold = folder / "Vera.ttf", folder / "VeraBd.ttf"
    if not (regular.exists() and bold.exists()):
        return "Helvetica", "Helvetica-Bold"
    pdfmetrics.registerFont(TTFont(_FONT, str(regular)))
    pdfmetrics.registerFont(TTFont(f"{_FONT}-Bold", str(bold)))
    addMapping(_FONT, 0, 0, _FONT)
    addMapping(_FONT, 1, 0, f"{_FONT}-Bold")
    return _FONT, f"{_FONT}-Bold"


class _Styles:
    def __init__(self) -> None:
        from reportlab.lib.styles import ParagraphStyle

        regular, bold = _fonts()
        self.body = ParagraphStyle("body", fontName=regular, fontSize=9, leading=11.5)
        self.cell = ParagraphStyle("cell", parent=self.body, fontSize=7.5, leading=9)
        self.head = ParagraphStyle("head", parent=self.cell, fontName=bold)
        self.muted = ParagraphStyle("muted", parent=self.body, textColor="#5c6670")
        self.h1 = ParagraphStyle("h1", fontName=bold, fontSize=16, leading=20, spaceAfter=6)
        self.h2 = ParagraphStyle(
            "h2", fontName=bold, fontSize=12, leading=15, spaceBefore=10, spaceAfter=4
        )
        self.h3 = ParagraphStyle("h3", fontName=bold, fontSize=9.5, leading=12, spaceBefore=6)
        self.quote = ParagraphStyle("quote", parent=self.cell, leftIndent=12, spaceAfter=4)


def _text(value: Any) -> str:
    return escape("" if value is None else str(value))


def render_report_pdf(report: ReportInput) -> bytes:
    from reportlab.lib.pagesizes import A4, landscape
    from reportlab.lib.units import mm
    from reportlab.platypus import SimpleDocTemplate

    styles = _Styles()
    buffer = io.BytesIO()
    document = SimpleDocTemplate(
        buffer,
        pagesize=landscape(A4),
        leftMargin=14 * mm,
        rightMargin=14 * mm,
        topMargin=14 * mm,
        bottomMargin=16 * mm,
        title=report.title,
        author="SCF assessment lifecycle",
        subject=report.assessment_name,
        invariant=1,
    )
    width = document.width
    story = _story(report, styles, width)

    def footer(canvas: Any, doc: Any) -> None:
        canvas.saveState()
        canvas.setFont(styles.body.fontName, 7)
        canvas.drawString(doc.leftMargin, 8 * mm, f"{report.title} (as of {report.as_of})"[:150])
        canvas.drawRightString(doc.leftMargin + width, 8 * mm, f"page {doc.page}")
        canvas.restoreState()

    document.build(story, onFirstPage=footer, onLaterPages=footer)
    return buffer.getvalue()


def _story(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    from reportlab.platypus import Paragraph

    story: list[Any] = [
        Paragraph(_text(report.title), styles.h1),
        Paragraph(
            f"Assessment: {_text(report.assessment_name)}. Prepared from the "
            f"artifacts as of {_text(report.as_of)}.",
            styles.muted,
        ),
    ]
    sections = [
        ("Summary", _summary),
        ("Scope", _scope),
        ("Statement of Applicability", _soa),
        ("Gaps", _gaps),
        ("Maturity by domain", _maturity),
        ("Plan of Action & Milestones", _poam),
        ("Evidence citations", _evidence),
    ]
    for heading, build in sections:
        story.append(Paragraph(_text(heading), styles.h2))
        story.extend(build(report, styles, width))
    return story


def _table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], styles: _Styles, widths: Sequence[float]
) -> list[Any]:
    from reportlab.platypus import Paragraph, Table, TableStyle

    data = [[Paragraph(_text(h), styles.head) for h in headers]]
    data += [[Paragraph(_text(cell), styles.cell) for cell in row] for row in rows]
    table = Table(data, colWidths=list(widths), repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("GRID", (0, 0), (-1, -1), 0.4, "#c8ccd1"),
                ("BACKGROUND", (0, 0), (-1, 0), "#eef1f4"),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    return [table]


def _split(width: float, *shares: float) -> list[float]:
    total = sum(shares)
    return [width * share / total for share in shares]


def _note(text: str, styles: _Styles) -> list[Any]:
    from reportlab.platypus import Paragraph

    return [Paragraph(_text(text), styles.muted)]


def _summary(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    return _table(("Figure", "Value"), summary_rows(report), styles, _split(width, 2, 3))


def _scope(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    if not report.scope:
        return _note("No scope artifact.", styles)
    rows = [
        (d.get("domain"), d.get("name"), len(d.get("controls", [])))
        for d in report.scope.get("domains", [])
    ]
    parts = _table(("Domain", "Name", "Controls"), rows, styles, _split(width, 1, 4, 1))
    out = report.scope.get("out_of_scope", [])
    if out:
        parts += _note(
            "Out of scope: " + ", ".join(f"{d.get('domain')} {d.get('name')}" for d in out), styles
        )
    return parts


def _soa(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    rows = [
        (
            c.get("control_id"),
            c.get("title"),
            "Yes" if c.get("applicable") else "No",
            c.get("justification"),
        )
        for c in report.soa.get("controls", [])
    ]
    return _table(
        ("Control", "Title", "Applicable", "Justification"), rows, styles, _split(width, 1, 3, 1, 6)
    )


def _gaps(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    gaps = report.gaps.get("gaps", [])
    if not gaps:
        return _note("No gaps: every applicable control has evidence.", styles)
    rows = [
        (
            g.get("control_id"),
            g.get("title"),
            g.get("severity"),
            f"{float(g.get('best_score', 0.0)):.2f}",
            g.get("finding"),
        )
        for g in gaps
    ]
    return _table(
        ("Control", "Title", "Severity", "Best score", "Finding"),
        rows,
        styles,
        _split(width, 1, 3, 1, 1, 6),
    )


def _maturity(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    rows = [
        (d.get("domain"), d.get("name"), d.get("level"), d.get("label"), d.get("rationale"))
        for d in report.maturity.get("domains", [])
    ]
    return _table(
        ("Domain", "Name", "Level", "Label", "Rationale"),
        rows,
        styles,
        _split(width, 1, 3, 1, 2, 6),
    )


def _poam(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    items = report.poam.get("items", [])
    if not items:
        return _note("No action items.", styles)
    rows = [[item.get(key) for key, _ in POAM_COLUMNS] for item in items]
    return _table(
        [title for _, title in POAM_COLUMNS], rows, styles, _split(width, 1.2, 1, 4, 5, 1, 1.3, 2)
    )


def _evidence(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    from reportlab.platypus import Paragraph

    controls = [c for c in report.evidence.get("controls", []) if supporting(c)]
    if not controls:
        return _note("No evidence citations.", styles)
    parts: list[Any] = []
    for control in controls:
        parts.append(
            Paragraph(
                f"{_text(control.get('control_id'))} {_text(control.get('title'))}", styles.h3
            )
        )
        for cite in supporting(control):
            where = " › ".join(
                filter(None, (str(cite.get("filename") or ""), str(cite.get("heading_path") or "")))
            )
            pages = page_label(cite)
            label = f"{where}, {pages}" if pages else where
            parts.append(
                Paragraph(
                    f"<b>{_text(label)}</b> (score {float(cite.get('score', 0.0)):.2f})",
                    styles.cell,
                )
            )
            parts.append(Paragraph(_text(cite.get("excerpt")), styles.quote))
    return parts
