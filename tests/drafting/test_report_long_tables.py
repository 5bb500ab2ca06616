"""The report's long tables in brief: a long Statement of Applicability is counted per
family in the report's body (HTML, PDF, DOCX) and a long POA&M listed one short line per
item; every row and column stays in the exports. Short ones are shown in full."""

from __future__ import annotations

import csv
import html as html_lib
import io
from typing import Any

import pypdfium2 as pdfium
from docx import Document

from workers.reporting.docx_export import render_report_docx
from workers.reporting.pdf import render_report_pdf
from workers.reporting.poam_export import render_poam_csv
from workers.reporting.render import (
    POAM_HEADERS,
    SOA_HEADERS,
    ReportInput,
    poam_body,
    render_report_html,
    soa_body,
)
from workers.reporting.soa_export import render_soa_csv
from workers.reporting.soa_summary import ROWS_IN_BODY, SUMMARY_HEADERS, family_summary_rows

FAMILIES = ("GOV", "IAC", "NET")


def _rows(count: int) -> list[dict[str, Any]]:
    statuses = ("implemented", "not_implemented", None)
    return [
        {
            "framework": "SCF",
            "requirement_id": f"{FAMILIES[i % 3]}-{i // 3 + 1:02d}",
            "title": f"Control {i}",
            "applicable": i % 7 != 0,
            "implementation_status": statuses[i % 3] if i % 2 else None,
            "proposed_implementation_status": "partially_implemented",
            "justification": f"row {i}'s own justification",
        }
        for i in range(count)
    ]


def _items(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"POAM-{i:04d}",
            "control_id": f"IAC-{i:02d}",
            "weakness": f"item {i}'s own weakness",
            "remediation": f"item {i}'s own remediation",
            "priority": "high",
            "milestone_date": "2025-06-30",
            "owner_role": "CISO",
        }
        for i in range(count)
    ]


def _report(count: int, items: int = 0) -> ReportInput:
    return ReportInput(
        title="Long",
        assessment_name="Long",
        as_of="2025-03-01 09:30 UTC",
        soa={"requirements": _rows(count)},
        gaps={},
        maturity={},
        poam={"items": _items(items)},
    )


def _renderings(report: ReportInput) -> tuple[str, str, str]:
    """The report's text as HTML (unescaped), PDF and DOCX (its tables' cells) give it."""
    html = html_lib.unescape(render_report_html(report))
    pdf = pdfium.PdfDocument(io.BytesIO(render_report_pdf(report)))
    text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    docx = Document(io.BytesIO(render_report_docx(report)))
    cells = "\n".join(c.text for t in docx.tables for r in t.rows for c in r.cells)
    return html, text, cells


def test_the_family_counts_add_up_to_the_rows_and_their_statuses() -> None:
    rows = _rows(ROWS_IN_BODY + 40)
    counted = family_summary_rows(rows)
    *families, total = counted
    assert [f[0] for f in families] == ["SCF GOV", "SCF IAC", "SCF NET"]
    assert total[1] == len(rows) == sum(f[1] for f in families)
    assert total[2] == sum(1 for r in rows if r["applicable"])
    # Each row has exactly one status: the statuses of a family add up to its rows.
    assert all(sum(f[3:]) == f[1] for f in counted)
    not_applicable = SUMMARY_HEADERS.index("Not applicable")
    assert total[not_applicable] == sum(1 for r in rows if not r["applicable"])


def test_a_short_soa_is_shown_row_by_row() -> None:
    headers, rows, where = soa_body(_report(ROWS_IN_BODY))
    assert headers == SOA_HEADERS and len(rows) == ROWS_IN_BODY and where is None


def test_a_long_soa_is_counted_per_family_in_every_rendering_and_whole_in_the_export() -> None:
    report = _report(ROWS_IN_BODY + 1)
    headers, rows, where = soa_body(report)
    assert headers == SUMMARY_HEADERS and len(rows) == len(FAMILIES) + 1
    assert where is not None and f"{ROWS_IN_BODY + 1:,} rows" in where

    html, pdf, docx = _renderings(report)
    assert where in html and "SCF GOV" in html and "SCF IAC" in pdf and "SCF NET" in docx
    for text in (html, pdf, docx):
        assert "row 5's own justification" not in text  # no row shown one by one

    exported = list(csv.reader(io.StringIO(render_soa_csv(report).decode("utf-8-sig"))))
    assert exported[0] == list(SOA_HEADERS) and len(exported) == ROWS_IN_BODY + 2
    assert any("row 5's own justification" in row for row in exported)


def test_a_long_poam_lists_each_item_in_one_line_and_the_export_keeps_every_column() -> None:
    headers, rows, where = poam_body(_report(1, ROWS_IN_BODY))
    assert headers == POAM_HEADERS and len(rows) == ROWS_IN_BODY and where is None

    report = _report(1, ROWS_IN_BODY + 1)
    headers, rows, where = poam_body(report)
    assert len(rows) == ROWS_IN_BODY + 1 and "Weakness" not in headers and where is not None
    assert [row[0] for row in rows] == [f"POAM-{i:04d}" for i in range(ROWS_IN_BODY + 1)]

    html, pdf, docx = _renderings(report)
    assert where in html
    for text in (html, pdf, docx):
        assert "POAM-0200" in text and "item 7's own weakness" not in text
        assert "item 7's own remediation" not in text

    exported = render_poam_csv(report).decode("utf-8-sig")
    assert "item 7's own weakness" in exported and "item 7's own remediation" in exported
