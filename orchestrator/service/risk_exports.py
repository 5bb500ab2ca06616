"""The risk register as CSV and XLSX: one row a risk at its newest version, the method
(scales, matrix, levels) stated above the rows, as ISO/IEC 27001 6.1.2 asks it be."""

from __future__ import annotations

import io
from typing import Any

from orchestrator.contracts import risk_method
from orchestrator.formats.spreadsheet import (
    csv_bytes,
    deterministic_xlsx,
    safe_cell,
    xlsx_cell,
    xlsx_text,
)
from orchestrator.service.risks import RiskRegister, RiskVersionView

COLUMNS: tuple[tuple[str, str], ...] = (
    ("risk_id", "Risk ID"),
    ("version", "Version"),
    ("title", "Risk"),
    ("asset", "Asset or process"),
    ("threat", "Threat"),
    ("vulnerability", "Vulnerability"),
    ("likelihood", "Likelihood (1-5)"),
    ("impact", "Impact (1-5)"),
    ("score", "Score (L x I)"),
    ("level", "Level"),
    ("owner", "Risk owner"),
    ("treatment", "Treatment option"),
    ("treatment_plan", "Treatment plan"),
    ("controls", "SCF controls"),
    ("requirements", "Framework requirements"),
    ("residual_likelihood", "Residual likelihood"),
    ("residual_impact", "Residual impact"),
    ("residual_level", "Residual level"),
    ("accepted_by", "Residual risk accepted by"),
    ("accepted_at", "Accepted at"),
    ("acceptance_note", "Acceptance note"),
    ("updated_by", "Last changed by"),
    ("updated_at", "Last changed at"),
)
XLSX_MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _values(view: RiskVersionView) -> dict[str, Any]:
    return {
        **view.model_dump(mode="json"),
        "controls": "; ".join(view.controls),
        "requirements": "; ".join(f"{r.framework} {r.requirement_id}" for r in view.requirements),
        "updated_by": view.actor_id,
        "updated_at": view.created_at.isoformat(),
    }


def register_rows(register: RiskRegister) -> list[list[str]]:
    return [[safe_cell(_values(v).get(key)) for key, _ in COLUMNS] for v in register.risks]


def _heading(register: RiskRegister) -> list[str]:
    return [f"Risk register of organisation {register.organization_id}", risk_method.method_text()]


def render_register_csv(register: RiskRegister) -> bytes:
    heading = [[safe_cell(line)] for line in _heading(register)]
    return csv_bytes([*heading, [title for _, title in COLUMNS], *register_rows(register)])


def render_register_xlsx(register: RiskRegister, as_of_iso: str) -> bytes:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Risk register"
    for line in _heading(register):
        sheet.append([xlsx_cell(line)])
    sheet.append([heading for _, heading in COLUMNS])
    header_row = len(_heading(register)) + 1
    for cell in sheet[header_row]:
        cell.font = Font(bold=True)
    for view in register.risks:
        sheet.append([xlsx_cell(_values(view).get(key)) for key, _ in COLUMNS])
    wide = {"title": 40, "asset": 30, "threat": 40, "vulnerability": 40, "treatment_plan": 50}
    for index, (key, _) in enumerate(COLUMNS, start=1):
        letter = sheet.cell(row=header_row, column=index).column_letter
        sheet.column_dimensions[letter].width = wide.get(key, 16)
    for cells in sheet.iter_rows(min_row=header_row + 1):
        for cell in cells:
            cell.alignment = Alignment(wrap_text=True, vertical="top")
    sheet.freeze_panes = f"A{header_row + 1}"
    method = workbook.create_sheet("Method")
    method.append(["Method", risk_method.METHOD_NAME])
    scales = (("likelihood", risk_method.LIKELIHOOD_SCALE), ("impact", risk_method.IMPACT_SCALE))
    for scale, meanings in scales:
        for value, meaning in meanings.items():
            method.append([f"{scale} {value}", meaning])
    for floor, name in risk_method.LEVELS:
        method.append([f"level {name}", f"score >= {floor}"])
    workbook.properties.title = xlsx_text(f"Risk register: {register.organization_id}")[:250]
    buffer = io.BytesIO()
    workbook.save(buffer)
    return deterministic_xlsx(buffer.getvalue(), as_of_iso.encode())
