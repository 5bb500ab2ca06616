"""The Statement of Applicability as CSV (`soa_csv`) and XLSX (`soa_xlsx`): the report's
SoA columns, with how each row's status was decided (one by one, or in one action on many
rows, who and when)."""

from __future__ import annotations

import csv
import io

from orchestrator.formats.spreadsheet import safe_cell, workbook
from workers.reporting.render import SOA_HEADERS, ReportInput, soa_table


def render_soa_csv(report: ReportInput) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(SOA_HEADERS)
    writer.writerows([safe_cell(value) for value in row] for row in soa_table(report))
    return buffer.getvalue().encode("utf-8-sig")  # the BOM makes Excel read UTF-8


def render_soa_xlsx(report: ReportInput, as_of_iso: str) -> bytes:
    sheet = ("Statement of Applicability", SOA_HEADERS, soa_table(report))
    return workbook(f"SoA: {report.assessment_name}", [sheet], as_of_iso)
