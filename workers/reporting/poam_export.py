"""The POA&M as CSV and XLSX: one row per action item, the same columns in both."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from typing import Any

from workers.reporting.render import ReportInput

# The columns of FedRAMP's POA&M (its "Open POA&M Items" sheet), in FedRAMP's order.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "POAM ID"),
    ("controls", "Controls"),
    ("weakness_name", "Weakness Name"),
    ("weakness", "Weakness Description"),
    ("weakness_detector_source", "Weakness Detector Source"),
    ("weakness_source_identifier", "Weakness Source Identifier"),
    ("asset_identifier", "Asset Identifier"),
    ("point_of_contact", "Point of Contact"),
    ("resources_required", "Resources Required"),
    ("remediation", "Overall Remediation Plan"),
    ("original_detection_date", "Original Detection Date"),
    ("scheduled_completion_date", "Scheduled Completion Date"),
    ("planned_milestones", "Planned Milestones"),
    ("milestone_changes", "Milestone Changes"),
    ("status", "Status"),
    ("status_date", "Status Date"),
    ("vendor_dependency", "Vendor Dependency"),
    ("last_vendor_check_in_date", "Last Vendor Check-in Date"),
    ("vendor_dependent_product_name", "Vendor Dependent Product Name"),
    ("original_risk_rating", "Original Risk Rating"),
    ("adjusted_risk_rating", "Adjusted Risk Rating"),
    ("risk_adjustment", "Risk Adjustment"),
    ("false_positive", "False Positive"),
    ("operational_requirement", "Operational Requirement"),
    ("deviation_rationale", "Deviation Rationale"),
    ("supporting_documents", "Supporting Documents"),
    ("comments", "Comments"),
    ("auto_approve", "Auto-Approve"),
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_CORE_DATES = re.compile(rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:\2>)")


def _cell(value: Any) -> str:
    """Text a spreadsheet will not run: a leading =, +, -, @ is quoted (CSV injection)."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def poam_rows(report: ReportInput) -> list[list[str]]:
    return [[_cell(item.get(key)) for key, _ in COLUMNS] for item in report.poam.get("items", [])]


def render_poam_csv(report: ReportInput) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([title for _, title in COLUMNS])
    writer.writerows(poam_rows(report))
    return buffer.getvalue().encode("utf-8-sig")  # the BOM makes Excel read UTF-8


def render_poam_xlsx(report: ReportInput, as_of_iso: str) -> bytes:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "POA&M"
    sheet.append([title for _, title in COLUMNS])
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for row in poam_rows(report):
        sheet.append(row)
    widths = {
        "weakness": 60,
        "remediation": 80,
        "weakness_name": 40,
        "planned_milestones": 60,
        "comments": 40,
    }
    for index, (key, _) in enumerate(COLUMNS, start=1):
        letter = sheet.cell(row=1, column=index).column_letter
        sheet.column_dimensions[letter].width = widths.get(key, 16)
    for row in sheet.iter_rows(min_row=2):
        for cell in row:
            cell.alignment = Alignment(wrap_text=True, vertical="top")
    sheet.freeze_panes = "A2"
    workbook.properties.title = f"POA&M: {report.assessment_name}"[:250]
    buffer = io.BytesIO()
    workbook.save(buffer)
    return _deterministic(buffer.getvalue(), as_of_iso.encode())


def _deterministic(data: bytes, moment: bytes) -> bytes:
    """openpyxl stamps 'now' into the file and its ZIP entries; the same report must
    give the same bytes (content addressing), so both become the report's as-of time."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            payload = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                payload = _CORE_DATES.sub(rb"\g<1>" + moment + rb"\g<3>", payload)
            entry = zipfile.ZipInfo(info.filename, date_time=_FIXED_ZIP_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = info.external_attr
            target.writestr(entry, payload)
    return out.getvalue()
