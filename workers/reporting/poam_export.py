"""The POA&M as CSV and XLSX in FedRAMP's Rev5 template columns, in its order.

The XLSX has FedRAMP's two sheets, "Open POA&M Items" and "Closed POA&M Items". A CSV holds
one sheet, so there are two CSV files with the same header: the open items (`poam_csv`)
and the closed ones (`poam_closed_csv`). FedRAMP's template has no "Status" column: an
item's sheet is its status."""

from __future__ import annotations

import io

from orchestrator.formats.spreadsheet import (
    csv_bytes,
    deterministic_xlsx,
    safe_cell,
    xlsx_cell,
    xlsx_text,
)
from workers.reporting.poam_stated import stated_items
from workers.reporting.render import ReportInput

# The columns of FedRAMP's Rev5 POA&M ("Open POA&M Items" and "Closed POA&M Items"), in order.
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
    ("bod_22_01_tracking", "Binding Operational Directive 22-01 tracking"),
    ("bod_22_01_due_date", "Binding Operational Directive 22-01 Due Date"),
    ("cve", "CVE"),
    ("service_name", "Service Name"),
)
SHEETS = (("items", "Open POA&M Items"), ("closed_items", "Closed POA&M Items"))


def poam_rows(report: ReportInput, listed: str = "items") -> list[list[str]]:
    # Amended on this very POA&M: its owner and date are the item's contact and plan.
    return [
        [safe_cell(item.get(key)) for key, _ in COLUMNS]
        for item in stated_items(report.poam, listed)
    ]


def render_poam_csv(report: ReportInput, listed: str = "items") -> bytes:
    return csv_bytes([[title for _, title in COLUMNS], *poam_rows(report, listed)])


def render_poam_closed_csv(report: ReportInput) -> bytes:
    return render_poam_csv(report, "closed_items")


def render_poam_xlsx(report: ReportInput, as_of_iso: str) -> bytes:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    workbook = Workbook()
    first = workbook.active
    assert first is not None
    workbook.remove(first)
    widths = {
        "weakness": 60,
        "remediation": 80,
        "weakness_name": 40,
        "planned_milestones": 60,
        "comments": 40,
    }
    for listed, title in SHEETS:
        sheet = workbook.create_sheet(title)
        sheet.append([heading for _, heading in COLUMNS])
        for cell in sheet[1]:
            cell.font = Font(bold=True)
        for row in poam_rows(report, listed):
            sheet.append([xlsx_cell(value) for value in row])
        for index, (key, _) in enumerate(COLUMNS, start=1):
            letter = sheet.cell(row=1, column=index).column_letter
            sheet.column_dimensions[letter].width = widths.get(key, 16)
        for cells in sheet.iter_rows(min_row=2):
            for cell in cells:
                cell.alignment = Alignment(wrap_text=True, vertical="top")
        sheet.freeze_panes = "A2"
    workbook.properties.title = xlsx_text(f"POA&M: {report.assessment_name}")[:250]
    buffer = io.BytesIO()
    workbook.save(buffer)
    return deterministic_xlsx(buffer.getvalue(), as_of_iso.encode())
