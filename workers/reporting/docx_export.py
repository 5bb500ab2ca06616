"""The assessment report as DOCX (python-docx), for people who edit it in a word processor:
the HTML report's sections in its order, each a heading with its tables, and the two
charts as pictures with their figures as a table beneath. Output bytes are deterministic:
the document's dates are the report's "as of" and every zip entry carries one fixed time."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from orchestrator.service.row_decisions import decision_lines
from workers.analysis.dismissals import open_gaps
from workers.reporting.chart_image import chart_png
from workers.reporting.chart_layout import layout
from workers.reporting.charts import Chart, chart_table, maturity_chart, status_chart
from workers.reporting.findings_summary import (
    BRIEF_HEADERS,
    FAMILY_HEADERS,
    brief_rows,
    family_rows,
)
from workers.reporting.render import (
    APPENDIX_NOTE,
    CATALOGUE_HEADERS,
    DISMISSED_HEADERS,
    GAP_HEADERS,
    MATURITY_HEADERS,
    SCOPE_HEADERS,
    SECTIONS,
    SIGNOFF_HEADERS,
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

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
#: The time every zip entry carries (zip's earliest): the same report, the same bytes.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
# XML 1.0 forbids most control characters; python-docx refuses text holding one.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def render_report_docx(report: ReportInput) -> bytes:
    from docx import Document
    from docx.shared import Mm

    document = Document()
    section = document.sections[0]
    section.page_width, section.page_height = Mm(297), Mm(210)  # landscape A4, as the PDF
    for margin in ("left_margin", "right_margin", "top_margin", "bottom_margin"):
        setattr(section, margin, Mm(14))
    _properties(document, report)
    document.add_heading(_text(report.title), level=0)
    document.add_paragraph(
        _text(
            f"Assessment: {report.assessment_name}. "
            f"Prepared from the artifacts as of {report.as_of}."
        )
    )
    if credit := credit_line(report):
        document.add_paragraph(_text(credit))
    document.add_heading("Contents", level=1)
    for _, heading in SECTIONS:
        document.add_paragraph(heading, style="List Number")
    builders = by_section(globals())
    for key, heading in SECTIONS:
        document.add_heading(heading, level=1)
        builders[key](report, document)
    return _fixed_zip(_saved(document))


def _properties(document: Any, report: ReportInput) -> None:
    core = document.core_properties
    core.title = _text(report.title)[:255]
    core.subject = _text(report.assessment_name)[:255]
    core.author = core.last_modified_by = "SCF assessment lifecycle"
    core.revision = 1
    core.created = core.modified = _as_of(report.as_of)


def _as_of(text: str) -> datetime:
    try:
        return datetime.strptime(text, "%Y-%m-%d %H:%M UTC").replace(tzinfo=UTC)
    except ValueError:
        return datetime(1980, 1, 1, tzinfo=UTC)


def _saved(document: Any) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _fixed_zip(data: bytes) -> bytes:
    """The package again, each entry in the same order with the fixed time."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for entry in source.infolist():
            info = zipfile.ZipInfo(entry.filename, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, source.read(entry.filename))
    return out.getvalue()


def _text(value: Any) -> str:
    return _NOT_XML.sub("", "" if value is None else str(value))


_RUN_BREAKS = re.compile(r"([\t\r\n])")


def _write(run: Any, text: str) -> None:
    """Text into a run's XML (`w:r`) as python-docx's `run.text` writes it (a tab element
    per tab, a break per line end, the rest as text), in pieces: its character-by-character
    walk was half of a 1,090-requirement report's time."""
    for piece in _RUN_BREAKS.split(text):
        if piece == "\t":
            run.add_tab()
        elif piece in ("\r", "\n"):
            run.add_br()
        elif piece:
            run.add_t(piece)


def _put(tc: Any, text: str) -> None:
    """`cell.text = text` for a cell's XML (`w:tc`): its content replaced by one paragraph
    of one run."""
    tc.clear_content()
    _write(tc.add_p().add_r(), text)


def _paragraph(document: Any, text: str, style_id: str | None = None) -> None:
    """`document.add_paragraph(text, style=...)` for a style looked up once: python-docx
    looks a named style up again for every paragraph, through every style of the package."""
    paragraph = document.add_paragraph()
    if style_id is not None:
        paragraph._p.style = style_id
    if text:  # as python-docx: no run for no text
        _write(paragraph._p.add_r(), text)


def _table(document: Any, headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A table with a bold header row that repeats on each page it spans."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    body = list(rows)
    table = document.add_table(rows=1 + len(body), cols=len(headers))
    table.style = "Table Grid"
    lines = iter(table.rows)  # walked once: indexing rows one by one is quadratic
    head = next(lines)
    repeat = OxmlElement("w:tblHeader")
    repeat.set(qn("w:val"), "true")
    head._tr.get_or_add_trPr().append(repeat)
    for cell, value in zip(head.cells, headers, strict=True):
        cell.paragraphs[0].add_run(_text(value)).bold = True
    for line, row in zip(lines, body, strict=True):
        # The row's own cell elements: a new table merges none, and `cells` works out
        # the grid of merged cells for every row.
        for tc, value in zip(line._tr.tc_lst, row, strict=True):
            _put(tc, _text(value))


def _note(document: Any, text: str) -> None:
    document.add_paragraph(_text(text))


def _chart(document: Any, chart: Chart) -> None:
    """The chart as a picture (as drawn in the HTML and PDF), its title, its figures."""
    from docx.shared import Mm

    if not chart.bars:
        return
    shapes = layout(chart)
    width = min(260.0, shapes.width * 0.3)  # the layout's points at 0.3 mm each, at most the page
    document.add_picture(io.BytesIO(chart_png(shapes)), width=Mm(width))
    document.add_paragraph(_text(chart.title), style="Caption")
    headers, rows = chart_table(chart)
    _table(document, headers, rows)


def _summary(report: ReportInput, document: Any) -> None:
    _table(document, ("Figure", "Value"), summary_rows(report))


def _statement(report: ReportInput, document: Any) -> None:
    _table(document, ("", "Statement"), statement_rows(report))


def _signoff(report: ReportInput, document: Any) -> None:
    if not report.signoff:
        return _note(document, "No sign-off records.")
    _table(document, SIGNOFF_HEADERS, [row for row, _ in signoff_lines(report)])


def _scope(report: ReportInput, document: Any) -> None:
    if not report.scope:
        return _note(document, "No scope artifact.")
    _table(document, SCOPE_HEADERS, scope_rows(report))
    if out := out_of_scope(report):
        _note(document, "Out of scope: " + out)


def _soa(report: ReportInput, document: Any) -> None:
    headers, rows, where = soa_body(report)
    for line in [*decision_lines(report.soa), *([where] if where else [])]:
        _note(document, line)
    _chart(document, status_chart(report.soa))
    _table(document, headers, rows)


def _gaps(report: ReportInput, document: Any) -> None:
    gaps = open_gaps(report.gaps)
    if gaps:
        document.add_heading("By family and severity", level=2)
        _table(document, FAMILY_HEADERS, family_rows(gaps))
        document.add_heading(f"Findings ({len(gaps)})", level=2)
        _note(document, APPENDIX_NOTE)
        _table(document, BRIEF_HEADERS, brief_rows(gaps))
    else:
        _note(document, "No gaps: every applicable control has evidence.")
    dismissed = dismissed_rows(report)
    if dismissed:
        document.add_heading(f"Dismissed as not a gap ({len(dismissed)})", level=2)
        _table(document, DISMISSED_HEADERS, dismissed)


def _maturity(report: ReportInput, document: Any) -> None:
    _chart(document, maturity_chart(report.maturity))
    _table(document, MATURITY_HEADERS, maturity_rows(report))


def _poam(report: ReportInput, document: Any) -> None:
    headers, rows, where = poam_body(report)
    if not rows:
        return _note(document, "No action items.")
    if where:
        _note(document, where)
    _table(document, headers, rows)


def _evidence(report: ReportInput, document: Any) -> None:
    controls = cited_controls(report)
    if not controls:
        return _note(document, "No evidence citations.")
    quote, heading = (document.styles[name].style_id for name in ("Quote", "Heading 3"))
    for control in controls:
        _paragraph(document, _text(f"{control.get('control_id')} {control.get('title')}"), heading)
        for cite in supporting(control):
            paragraph = document.add_paragraph()
            paragraph.add_run(_text(citation_label(cite))).bold = True
            paragraph.add_run(f" (score {float(cite.get('score', 0.0)):.2f})")
            _paragraph(document, _text(cite.get("excerpt")), quote)


def _catalogues(report: ReportInput, document: Any) -> None:
    found = catalogue_rows(report)
    if not found:
        return _note(document, "No catalogue named.")
    _table(document, CATALOGUE_HEADERS, found)


def _findings(report: ReportInput, document: Any) -> None:
    if not open_gaps(report.gaps):
        return _note(document, "No gaps.")
    _table(document, GAP_HEADERS, gap_rows(report))
