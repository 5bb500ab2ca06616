"""The assessment report as PDF (ReportLab, pure Python): the sections of the HTML report
after a table of contents with page numbers, and a footer reading "page N of M". Every
value is escaped; output bytes are deterministic (invariant mode, no clock, no random).

The contents need the pages the sections land on, and the footer the page count; both are
known only once the last page is laid out. The document is laid out once: each contents
line places a form (a PDF XObject) where its page number goes, each footer is drawn when
the canvas is saved, and the forms are filled in then with the pages the headings landed
on. ReportLab's multi-pass build laid the whole document out twice for the same PDF."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from orchestrator.service.row_decisions import decision_lines
from workers.analysis.dismissals import open_gaps
from workers.reporting.chart_drawing import chart_drawing
from workers.reporting.chart_layout import layout
from workers.reporting.charts import Chart, maturity_chart, status_chart
from workers.reporting.findings_summary import (
    BRIEF_HEADERS,
    FAMILY_HEADERS,
    brief_rows,
    family_rows,
)
from workers.reporting.render import (
    ALERT,
    APPENDIX_NOTE,
    CATALOGUE_HEADERS,
    DISMISSED_HEADERS,
    GAP_HEADERS,
    MATURITY_HEADERS,
    SCOPE_HEADERS,
    SECTIONS,
    SIGNOFF_HEADERS,
    SOA_HEADERS,
    ReportInput,
    by_section,
    catalogue_rows,
    citation_label,
    cited_controls,
    credit_line,
    dismissed_rows,
    gap_rows,
    maturity_rows,
    out_of_scope,
    poam_body,
    scope_rows,
    signoff_lines,
    soa_body,
    statement_rows,
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
        self.alert = ParagraphStyle("alert", parent=self.cell, fontName=bold, textColor=ALERT)
        self.muted = ParagraphStyle("muted", parent=self.body, textColor="#5c6670")
        self.h1 = ParagraphStyle("h1", fontName=bold, fontSize=16, leading=20, spaceAfter=6)
        self.h2 = ParagraphStyle(
            "h2", fontName=bold, fontSize=12, leading=15, spaceBefore=10, spaceAfter=4
        )
        self.h3 = ParagraphStyle("h3", fontName=bold, fontSize=9.5, leading=12, spaceBefore=6)
        self.quote = ParagraphStyle("quote", parent=self.cell, leftIndent=12, spaceAfter=4)
        self.toc = ParagraphStyle("toc", parent=self.body, leftIndent=12, spaceAfter=2)


def _text(value: Any) -> str:
    return escape("" if value is None else str(value))


def render_report_pdf(report: ReportInput) -> bytes:
    from reportlab.lib.pagesizes import A4, landscape
    from reportlab.lib.units import mm

    styles = _Styles()
    buffer = io.BytesIO()
    document = _document_class()(
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
    footer_text = f"{report.title} (as of {report.as_of})"[:150]
    document.build(
        _story(report, styles, document.width),
        canvasmaker=_numbered_canvas(styles, footer_text, 14 * mm, 8 * mm, document.width),
    )
    return buffer.getvalue()


def _page_form(key: str) -> str:
    """The form that shows the page a section's heading is on."""
    return f"contents-page-{key}"


def _document_class() -> type[Any]:
    """A document that lists each section heading in the contents, linked to its page."""
    from reportlab.platypus import SimpleDocTemplate

    class _Document(SimpleDocTemplate):  # type: ignore[misc]
        def afterFlowable(self, flowable: Any) -> None:
            key = getattr(flowable, "_section_key", None)
            if key is not None:
                self.canv.bookmarkPage(key)
                self.canv.section_pages[key] = self.page

    return _Document


def _numbered_canvas(
    styles: _Styles, text: str, margin: float, baseline: float, width: float
) -> type[Any]:
    """A canvas that holds its pages until saved, then draws "page N of M" on each and
    fills in the contents' page forms with the pages the sections landed on."""
    from reportlab.pdfgen.canvas import Canvas

    font, contents = styles.body.fontName, styles.toc

    class _NumberedCanvas(Canvas):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._pages: list[dict[str, Any]] = []
            self.section_pages: dict[str, int] = {}
            # Called as (canvas, kind, label): the method unbound, the canvas its self.
            self.setNamedCB("contents_page", _NumberedCanvas.contents_page)

        def showPage(self) -> None:  # noqa: N802 (ReportLab's name)
            self._pages.append(dict(self.__dict__))
            self._startPage()

        def contents_page(self, kind: str, key: str) -> None:
            """A contents line's `onDraw`, where its text ends (in the line's coordinates):
            its page number's form, at the contents' right edge."""
            self.saveState()
            self.translate(width, self._curr_tx_info["cur_y"])
            self.doForm(_page_form(key))
            self.restoreState()

        def save(self) -> None:
            # Each number is drawn right-aligned on its form's origin, which
            # `contents_page` placed at the contents' right edge.
            for key, heading_page in self.section_pages.items():
                self.beginForm(_page_form(key), lowerx=-200, lowery=-5, upperx=0, uppery=20)
                self.setFont(contents.fontName, contents.fontSize)
                self.setFillColor(contents.textColor)
                self.drawRightString(0, 0, str(heading_page))
                self.endForm()
            total = len(self._pages)
            for number, page in enumerate(self._pages, start=1):
                self.__dict__.update(page)
                self.saveState()
                self.setFont(font, 7)
                width = self._pagesize[0]
                self.drawString(margin, baseline, text)
                self.drawRightString(width - margin, baseline, f"page {number} of {total}")
                self.restoreState()
                super().showPage()
            super().save()

    return _NumberedCanvas


def _story(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    from reportlab.platypus import Paragraph

    story: list[Any] = [
        Paragraph(_text(report.title), styles.h1),
        Paragraph(
            f"Assessment: {_text(report.assessment_name)}. Prepared from the "
            f"artifacts as of {_text(report.as_of)}.",
            styles.muted,
        ),
        Paragraph(_text(credit_line(report)), styles.muted),
        Paragraph("Contents", styles.h2),
        *(_contents_line(key, heading, styles) for key, heading in SECTIONS),
    ]
    builders = by_section(globals())
    for key, heading in SECTIONS:
        title = Paragraph(_text(heading), styles.h2)
        title._section_key = key  # its page, for the contents, and the link target
        story.append(title)
        story.extend(builders[key](report, styles, width))
    return story


def _contents_line(key: str, heading: str, styles: _Styles) -> Any:
    """A contents line: the heading, linked to its section; where its text ends the canvas
    places the form its page number is drawn in (`_NumberedCanvas.contents_page`)."""
    from reportlab.platypus import Paragraph

    return Paragraph(
        f'<a href="#{key}">{_text(heading)}</a><onDraw name="contents_page" label="{key}"/>',
        styles.toc,
    )


#: Rows per table flowable: ReportLab splits a long table at every page by measuring all
#: that is left of it, so one 1,000-row table costs quadratic time; short ones do not.
TABLE_CHUNK = 40


def _table(
    headers: Sequence[str],
    rows: Iterable[Sequence[Any]],
    styles: _Styles,
    widths: Sequence[float],
    alerts: Sequence[bool] = (),
) -> list[Any]:
    """`alerts`: per row, whether it is shown in the alert colour. Long tables are laid out
    as consecutive tables of TABLE_CHUNK rows, each with the header row."""
    from reportlab.platypus import Table, TableStyle

    cell_of = _cell_class()
    head = [cell_of(_text(h), styles.head) for h in headers]
    flagged = list(alerts)
    body = [
        [
            cell_of(_text(cell), styles.alert if i < len(flagged) and flagged[i] else styles.cell)
            for cell in row
        ]
        for i, row in enumerate(rows)
    ]
    style = TableStyle(
        [
            ("GRID", (0, 0), (-1, -1), 0.4, "#c8ccd1"),
            ("BACKGROUND", (0, 0), (-1, 0), "#eef1f4"),
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ]
    )
    tables = []
    for start in range(0, max(len(body), 1), TABLE_CHUNK):
        table = Table(
            [head, *body[start : start + TABLE_CHUNK]],
            colWidths=list(widths),
            repeatRows=1,
            splitInRow=1,
        )
        table.setStyle(style)
        tables.append(table)
    return tables


@lru_cache(maxsize=1)
def _cell_class() -> type[Any]:
    """A table cell's paragraph that breaks its lines once per width. A table asks each
    cell's size when it measures its rows, again when it splits at a page and again when
    it draws: three line breakings of the same text at the same width, most of a long
    report's time. The text and style never change after it is made, so the first
    answer stands."""
    from reportlab.platypus import Paragraph

    class _Cell(Paragraph):  # type: ignore[misc]
        _wrapped_at: float | None = None

        def wrap(self, availWidth: float, availHeight: float) -> tuple[float, float]:  # noqa: N803 (ReportLab's names)
            # Its lines, if they are still its own: a split copies a paragraph's fields.
            if self._wrapped_at != availWidth or "blPara" not in self.__dict__:
                size = super().wrap(availWidth, availHeight)
                self._wrapped_at = availWidth if "blPara" in self.__dict__ else None
                return tuple(size)
            return self.width, self.height

    return _Cell


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
    parts = _table(SCOPE_HEADERS, scope_rows(report), styles, _split(width, 1, 4, 1))
    if out := out_of_scope(report):
        parts += _note("Out of scope: " + out, styles)
    return parts


#: The SoA's columns' shares of the page's width, row by row.
SOA_SHARES = (1.1, 2, 1.4, 0.9, 3.4, 2.2, 1.2, 1.3, 1.2, 2.6, 2)


def _soa(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    headers, rows, where = soa_body(report)
    lines = [*decision_lines(report.soa), *([where] if where else [])]
    said = [part for line in lines for part in _note(line, styles)]
    shares = SOA_SHARES if headers == SOA_HEADERS else (3,) + (1.3,) * (len(headers) - 1)
    chart = _chart(status_chart(report.soa), styles, width)
    return said + chart + _table(headers, rows, styles, _split(width, *shares))


def _signoff(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    if not report.signoff:
        return _note("No sign-off records.", styles)
    lines = signoff_lines(report)
    return _table(
        SIGNOFF_HEADERS,
        [row for row, _ in lines],
        styles,
        _split(width, 3, 2, 1.2, 3, 2, 2, 2.5),
        [alert for _, alert in lines],
    )


def _statement(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    return _table(("", "Statement"), statement_rows(report), styles, _split(width, 1, 4))


def _catalogues(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    found = catalogue_rows(report)
    if not found:
        return _note("No catalogue named.", styles)
    return _table(CATALOGUE_HEADERS, found, styles, _split(width, 1.5, 3, 2, 6))


def _gaps(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    dismissed = dismissed_rows(report)
    apart = (
        _note(f"Dismissed as not a gap ({len(dismissed)}):", styles)
        + _table(DISMISSED_HEADERS, dismissed, styles, _split(width, 1, 3, 1, 4, 2, 2))
        if dismissed
        else []
    )
    gaps = open_gaps(report.gaps)
    if not gaps:
        return _note("No gaps: every applicable control has evidence.", styles) + apart
    families = _table(FAMILY_HEADERS, family_rows(gaps), styles, _split(width, 4, 1, 1, 1, 1))
    brief = _table(BRIEF_HEADERS, brief_rows(gaps), styles, _split(width, 2, 5, 1, 2))
    return families + _note(APPENDIX_NOTE, styles) + brief + apart


def _findings(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    if not open_gaps(report.gaps):
        return _note("No gaps.", styles)
    return _table(GAP_HEADERS, gap_rows(report), styles, _split(width, 1, 3, 1, 1, 2, 5))


def _maturity(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    table = _table(MATURITY_HEADERS, maturity_rows(report), styles, _split(width, 1, 3, 1, 2, 6))
    return _chart(maturity_chart(report.maturity), styles, width) + table


#: The most of a page's height a chart takes: its caption and the table start beside it.
CHART_HEIGHT = 380


def _chart(chart: Chart, styles: _Styles, width: float) -> list[Any]:
    """The chart as drawn in the HTML, captioned; nothing for a chart with no bars."""
    if not chart.bars:
        return []
    drawing = chart_drawing(layout(chart), styles.body.fontName, width, CHART_HEIGHT)
    return [drawing, *_note(chart.title, styles)]


def _poam(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    headers, rows, where = poam_body(report)
    if not rows:
        return _note("No action items.", styles)
    shares = (1.2, 1, 4, 5, 1, 1.3, 2) if where is None else (1.2, 1.2, 1, 1.3, 2)
    said = _note(where, styles) if where else []
    return said + _table(headers, rows, styles, _split(width, *shares))


def _evidence(report: ReportInput, styles: _Styles, width: float) -> list[Any]:
    from reportlab.platypus import Paragraph

    controls = cited_controls(report)
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
            label = _text(citation_label(cite))
            parts.append(
                Paragraph(
                    f"<b>{label}</b> (score {float(cite.get('score', 0.0)):.2f})",
                    styles.cell,
                )
            )
            parts.append(Paragraph(_text(cite.get("excerpt")), styles.quote))
    return parts
