"""Workbooks hold whatever text people gave: a control character XML cannot carry, in a
cell or in the title (an organisation's id, an assessment's name), is written as OOXML's
`_xHHHH_` escape instead of failing the export (a fuzzer found the risk register's XLSX
answering 500 for an organisation id holding U+0006)."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from openpyxl import load_workbook

from orchestrator.contracts import risk_method
from orchestrator.formats.spreadsheet import workbook, xlsx_cell, xlsx_text
from orchestrator.service.risk_exports import render_register_csv, render_register_xlsx
from orchestrator.service.risks import RiskRegister

AS_OF = datetime(2027, 1, 31, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_text_xml_cannot_carry_is_escaped_and_a_formula_is_quoted() -> None:
    assert xlsx_text("a\x06b\x1f") == "a_x0006_b_x001F_"
    assert xlsx_text("tab\tand\nnewline") == "tab\tand\nnewline", "XML carries these"
    assert xlsx_cell("=HYPERLINK(1)\x07") == "'=HYPERLINK(1)_x0007_"


def test_a_register_whose_organisation_id_holds_a_control_character_exports() -> None:
    register = RiskRegister(
        tenant_id="t",
        organization_id="acme\x06ops",
        method=risk_method.method_statement(),
        risks=[],
    )
    book = load_workbook(io.BytesIO(render_register_xlsx(register, AS_OF)))
    assert book.properties.title == "Risk register: acme_x0006_ops"
    assert "acme_x0006_ops" in str(book["Risk register"]["A1"].value)
    assert b"acme\x06ops" in render_register_csv(register)


def test_a_workbook_titled_with_a_control_character_is_written() -> None:
    data = workbook("SoA\x0b2027", [("Rows", ["Name"], [["x\x01"]])], AS_OF)
    book = load_workbook(io.BytesIO(data))
    assert book.properties.title == "SoA_x000B_2027"
    assert book["Rows"]["A2"].value == "x_x0001_"
