"""The gap findings as CSV (`findings_csv`: the open findings, as the report lists them)
and XLSX (`findings_xlsx`: the open findings, and on a second sheet those a reviewer marked
not a gap, with the reason and who decided)."""

from __future__ import annotations

from orchestrator.formats.spreadsheet import csv_bytes, safe_cell, workbook
from workers.reporting.render import (
    DISMISSED_HEADERS,
    GAP_HEADERS,
    ReportInput,
    dismissed_rows,
    gap_rows,
)


def render_findings_csv(report: ReportInput) -> bytes:
    body = ([safe_cell(value) for value in row] for row in gap_rows(report))
    return csv_bytes([GAP_HEADERS, *body])


def render_findings_xlsx(report: ReportInput, as_of_iso: str) -> bytes:
    sheets = [
        ("Gap findings", GAP_HEADERS, gap_rows(report)),
        ("Not a gap", DISMISSED_HEADERS, dismissed_rows(report)),
    ]
    return workbook(f"Findings: {report.assessment_name}", sheets, as_of_iso)
