"""The Statement of Applicability as CSV (`soa_csv`) and XLSX (`soa_xlsx`): the report's
SoA columns, with how each row's status was decided (one by one, or in one action on many
rows, who and when)."""

from __future__ import annotations

from orchestrator.formats.spreadsheet import csv_bytes, safe_cell, workbook
from workers.reporting.render import SOA_HEADERS, ReportInput, soa_table


def render_soa_csv(report: ReportInput) -> bytes:
    body = ([safe_cell(value) for value in row] for row in soa_table(report))
    return csv_bytes([SOA_HEADERS, *body])


def render_soa_xlsx(report: ReportInput, as_of_iso: str) -> bytes:
    sheet = ("Statement of Applicability", SOA_HEADERS, soa_table(report))
    return workbook(f"SoA: {report.assessment_name}", [sheet], as_of_iso)
