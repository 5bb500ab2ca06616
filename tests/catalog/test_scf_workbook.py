"""The SCF workbook reader on the official 2022.3 workbook, checked against the sheet itself."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from orchestrator.catalog import scf_workbook
from orchestrator.catalog.scf_workbook import (
    ScfWorkbook,
    WorkbookFormatError,
    normalise_requirement_id,
    read_scf_workbook,
)


@pytest.fixture(scope="module")
def workbook(scf_workbook_path: Path) -> ScfWorkbook:
    return read_scf_workbook(scf_workbook_path)


@pytest.fixture(scope="module")
def sheet_rows(scf_workbook_path: Path) -> list[tuple[object, ...]]:
    """The main sheet's rows, read once by openpyxl: the reader's second opinion."""
    book = openpyxl.load_workbook(scf_workbook_path, read_only=True)
    rows = list(book.worksheets[0].iter_rows(values_only=True))
    book.close()
    return rows


def _column_cells(rows: list[tuple[object, ...]], header_text: str) -> list[tuple[str, str]]:
    """(SCF #, cell) for every filled cell of one column, read straight from the sheet."""
    header = [" ".join(str(h).split()) if h else "" for h in rows[0]]
    id_at, at = header.index("SCF #"), header.index(header_text)
    return [
        (str(row[id_at]), str(row[at]))
        for row in rows[1:]
        if row[id_at] and row[at] is not None and str(row[at]).strip()
    ]


def test_reads_every_control_verbatim(workbook: ScfWorkbook) -> None:
    assert workbook.release == "2022.3"
    assert len(workbook.controls) == 1090
    assert len({c.id for c in workbook.controls}) == 1090
    gov = workbook.control("GOV-01")
    assert gov is not None
    assert gov.domain == "GOV" and gov.domain_name == "Security & Privacy Governance"
    assert gov.description.startswith("Mechanisms exist to facilitate the implementation")
    assert gov.question.startswith("Does the organization staff a function")
    assert gov.weighting == 10 and gov.erl_ids == ("E-GOV-01", "E-GOV-02")
    assert len(gov.sp_cmm) == 6 and gov.sp_cmm[0].startswith("- There is no evidence")
    assert "Steering committee" in gov.methods_to_comply


def test_side_sheets(workbook: ScfWorkbook) -> None:
    assert len(workbook.domains) == 32
    assert {d.identifier for d in workbook.domains} == {c.domain for c in workbook.controls}
    erl = {e.erl_id: e for e in workbook.evidence_requests}
    assert erl["E-GOV-01"].control_ids == ("GOV-01",)
    every_erl = {e for c in workbook.controls for e in c.erl_ids}
    assert every_erl <= set(erl)
    assert len(workbook.authoritative_sources) >= 180


@pytest.mark.parametrize(
    "header",
    [
        "AICPA TSC 2017 (SOC 2)",
        "ISO 27001 v2022",
        "ISO 27002 v2022",
        "NIST 800-53 rev5",
        "NIST CSF v1.1",
        "PCIDSS v4.0",
        "US HIPAA",
        "EMEA EU GDPR",
    ],
)
def test_links_equal_the_column(
    workbook: ScfWorkbook, sheet_rows: list[tuple[object, ...]], header: str
) -> None:
    cells = _column_cells(sheet_rows, header)
    expected = {
        (control, normalise_requirement_id(line))
        for control, cell in cells
        for line in cell.splitlines()
        if line.strip()
    }
    links = workbook.links_for(header)
    assert {(link.control_id, link.requirement_id) for link in links} == expected
    assert len({link.control_id for link in links}) == len(cells)


def test_mapping_columns_stop_before_selection_tags(workbook: ScfWorkbook) -> None:
    headers = [c.header for c in workbook.mapping_columns]
    assert headers[0] == "AICPA TSC 2017 (SOC 2)" and headers[-1] == "Americas Uruguay"
    assert not any(h.startswith(("Risk", "Threat", "SCF-")) for h in headers)
    versions = {c.header: c.version for c in workbook.mapping_columns}
    assert versions["ISO 27001 v2022"] == "2022" and versions["NIST 800-53 rev5"] == "5"


def test_requirement_ids_normalised_once() -> None:
    assert normalise_requirement_id(" 5.1 (a) ") == "5.1(a)"
    assert normalise_requirement_id("CC7.4 ") == "CC7.4"
    assert normalise_requirement_id("Art  32.1") == "Art 32.1"
    assert normalise_requirement_id(12.1) == "12.1"


def test_missing_column_is_named(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "SCF 2024.1"
    sheet.append(
        [
            "SCF Domain",
            "SCF Control",
            "SCF #",
            "Secure Controls Framework (SCF)\nControl Description",
        ]
    )
    sheet.append(["Governance", "Program", "GOV-01", "Mechanisms exist"])
    path = tmp_path / "scf.xlsx"
    book.save(path)
    with pytest.raises(WorkbookFormatError, match="no column 'methods to comply"):
        read_scf_workbook(path)


def test_not_a_workbook(tmp_path: Path) -> None:
    path = tmp_path / "scf.xlsx"
    path.write_text("not a zip")
    with pytest.raises(WorkbookFormatError, match="not a readable xlsx"):
        read_scf_workbook(path)


def test_the_same_workbook_as_openpyxl_reads_it(
    workbook: ScfWorkbook, scf_workbook_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader takes the sheets through calamine; openpyxl's read-only book gives every
    control, link, domain and source the same (a whole number is an int: "620", not "620.0")."""
    monkeypatch.setattr(
        scf_workbook,
        "_Book",
        lambda _: openpyxl.load_workbook(scf_workbook_path, read_only=True, data_only=True),
    )
    assert read_scf_workbook(scf_workbook_path) == workbook
