"""Catalogue versions in the database: imported from the real files, idempotent, diffed,
and pinned by runs. SQLite here; the PostgreSQL import is in test_catalog_postgres."""

from __future__ import annotations

import json
import time
from pathlib import Path

import openpyxl
import pytest
from sqlalchemy import func, select

from orchestrator.catalog import registry, service
from orchestrator.catalog.matching import resolve
from orchestrator.catalog.model import SCF_NAME, LoadedCatalog
from orchestrator.catalog.scf_workbook import normalise_requirement_id
from orchestrator.catalog.store import CATALOGS, CONTROLS, FRAMEWORKS, LINKS, REQUIREMENTS
from orchestrator.db.session import transaction
from tests.catalog.releases import ADDED, NEW_RELEASE, REWORDED, WITHDRAWN, write_newer_release

TABLES = (CATALOGS, CONTROLS, FRAMEWORKS, REQUIREMENTS, LINKS)


def _counts() -> list[int]:
    with transaction() as session:
        return [session.scalar(select(func.count()).select_from(t)) or 0 for t in TABLES]


def _column_rows(path: Path) -> dict[str, set[str]]:
    """For every column of the main sheet: the SCF controls whose cell is filled, and the
    ids it holds, read straight from the sheet (not through the reader)."""
    book = openpyxl.load_workbook(path, read_only=True)
    rows = book.worksheets[0].iter_rows(values_only=True)
    header = [" ".join(str(h).split()) if h else "" for h in next(rows)]
    at_id = header.index("SCF #")
    filled: dict[str, set[str]] = {h: set() for h in header}
    ids: dict[str, set[str]] = {h: set() for h in header}
    for row in rows:
        for i, cell in enumerate(row):
            if row[at_id] and cell is not None and str(cell).strip():
                filled[header[i]].add(str(row[at_id]))
                ids[header[i]] |= {
                    normalise_requirement_id(x) for x in str(cell).splitlines() if x.strip()
                }
    book.close()
    return {"__ids__" + h: v for h, v in ids.items()} | filled


def _linked(catalog: LoadedCatalog, name: str) -> set[str]:
    choice = resolve([catalog], name)
    assert choice is not None, name
    return {c for r in choice.framework.requirements for c in r.control_ids}


def test_counts_per_framework_equal_the_workbook_columns(scf_workbook_path: Path) -> None:
    catalog = registry.shipped_catalog()
    columns = _column_rows(scf_workbook_path)
    checked = 0
    for framework in catalog.frameworks:
        sources = framework.details.get("columns")
        if not sources or framework.name.startswith("ISO/IEC 27001"):
            continue
        assert _linked(catalog, framework.name) == columns[sources[0]], framework.name
        checked += 1
    assert checked == 190  # every mapping column but the two ISO 27001 ones
    assert len(_linked(catalog, "SOC 2")) == len(columns["AICPA TSC 2017 (SOC 2)"]) == 284
    annex = {c for c in columns["ISO 27002 v2022"]}  # every 27002:2022 row maps 5.x-8.x ids
    assert _linked(catalog, "ISO/IEC 27001:2022") <= columns["ISO 27001 v2022"] | annex
    assert columns["ISO 27001 v2022"] <= _linked(catalog, "ISO/IEC 27001:2022")


def test_annex_a_controls_and_clauses_are_distinct(scf_workbook_path: Path) -> None:
    choice = resolve([registry.shipped_catalog()], "ISO/IEC 27001:2022")
    assert choice is not None
    requirements = {r.id: set(r.control_ids) for r in choice.framework.requirements}
    annex = {i for i in requirements if i.startswith("A.")}
    clauses = set(requirements) - annex
    expected_annex = (
        {f"A.5.{n}" for n in range(1, 38)}
        | {f"A.6.{n}" for n in range(1, 9)}
        | {f"A.7.{n}" for n in range(1, 15)}
        | {f"A.8.{n}" for n in range(1, 35)}
    )
    assert annex <= expected_annex and len(annex) >= 90
    assert all(i[0].isdigit() for i in clauses)
    assert {"5.1", "A.5.1", "10.2", "A.8.34"} <= set(requirements)
    assert requirements["5.1"] != requirements["A.5.1"]  # the clause is not the control
    columns = _column_rows(scf_workbook_path)
    assert {f"A.{i}" for i in columns["__ids__ISO 27002 v2022"] if i[0] in "5678"} == annex
    assert clauses == columns["__ids__ISO 27001 v2022"]


def test_reimport_is_a_no_op(embedded: Path, scf_workbook_path: Path, nist_dir: Path) -> None:
    catalog = nist_dir / "NIST_SP-800-53_rev5.0.1_catalog.json"
    first = service.import_file(scf_workbook_path)
    service.import_file(catalog)
    assert first.created and first.controls == 1090
    before = _counts()
    again = service.import_file(scf_workbook_path)
    assert (again.created, again.info.id) == (False, first.info.id)
    assert not service.import_file(catalog).created
    assert _counts() == before
    # What the database holds reads back as what the file says.
    with transaction() as session:
        registry.forget_loaded()
        stored = registry.load(session, first.info.id)
    shipped = registry.shipped_catalog()
    assert stored.controls == shipped.controls
    assert [f.requirements for f in stored.frameworks] == [
        f.requirements for f in shipped.frameworks
    ]


def test_the_shipped_workbook_is_the_official_file_unmodified(scf_workbook_path: Path) -> None:
    assert registry.file_sha256(registry.shipped_path()) == registry.file_sha256(scf_workbook_path)
    assert registry.shipped_info() == registry.shipped_catalog().info
    notice = registry.shipped_path().with_name("NOTICE.md").read_text(encoding="utf-8")
    assert "Secure Controls Framework (SCF), CC BY-ND 4.0" in notice


@pytest.mark.parametrize("baseline", ["LOW", "MODERATE"])
def test_an_oscal_profile_resolves_to_its_baseline(
    embedded: Path, nist_dir: Path, baseline: str
) -> None:
    service.import_file(nist_dir / "NIST_SP-800-53_rev5.0.1_catalog.json")
    result = service.import_file(nist_dir / f"NIST_SP-800-53_rev5_{baseline}-baseline_profile.json")
    resolved = json.loads(
        (
            nist_dir / f"NIST_SP-800-53_rev5_{baseline}-baseline-resolved-profile_catalog.json"
        ).read_text(encoding="utf-8")
    )

    def labels(controls: list[dict]) -> set[str]:  # type: ignore[type-arg]
        out: set[str] = set()
        for control in controls:
            out |= {
                p["value"]
                for p in control.get("props", [])
                if p["name"] == "label" and "class" not in p
            }
            out |= labels(control.get("controls", []))
        return out

    expected = set().union(*(labels(g.get("controls", [])) for g in resolved["catalog"]["groups"]))
    name = f"NIST SP 800-53 rev5 {baseline.title()}"
    shown = service.show_framework(name)
    assert shown["id"] == str(result.info.id) or shown["catalog"]["id"] == str(result.info.id)
    assert {r["requirement_id"] for r in shown["items"]} == expected
    assert shown["kind"] == "oscal_profile"
    # Linked to SCF controls through the workbook's 800-53 rev5 column.
    ac2 = next(r for r in shown["items"] if r["requirement_id"] == "AC-2")
    column = resolve([registry.shipped_catalog()], "NIST 800-53 rev5")
    assert column is not None
    assert ac2["controls"] == list(
        next(r.control_ids for r in column.framework.requirements if r.id == "AC-2")
    )


def test_a_profile_without_its_catalog_is_refused(embedded: Path, nist_dir: Path) -> None:
    with pytest.raises(ValueError, match="import that OSCAL catalog first"):
        service.import_file(nist_dir / "NIST_SP-800-53_rev5_LOW-baseline_profile.json")
    assert _counts() == [0, 0, 0, 0, 0]


@pytest.fixture(scope="module")
def newer_release(scf_workbook_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    began = time.monotonic()
    path = write_newer_release(
        scf_workbook_path, tmp_path_factory.mktemp("scf") / f"SCF_{NEW_RELEASE}.xlsx"
    )
    print(f"newer release written in {time.monotonic() - began:.1f} s")
    return path


def test_a_newer_release_is_a_new_version_and_diffs(embedded: Path, newer_release: Path) -> None:
    result = service.import_file(newer_release)
    assert result.created and result.info.version == NEW_RELEASE
    listed = {(c.info.version, c.current) for c in service.list_catalogs()}
    assert listed == {("2022.3", False), (NEW_RELEASE, True)}
    diff = service.diff_catalogs("2022.3", NEW_RELEASE)
    assert diff["added"] == [ADDED] and diff["removed"] == [WITHDRAWN]
    assert diff["changed"] == [{"control_id": REWORDED, "fields": ["description"]}]


def test_a_pinned_run_is_unaffected_by_a_newer_import(embedded: Path, newer_release: Path) -> None:
    with transaction() as session:
        pins = registry.current_pins(session)
    assert pins == {SCF_NAME: str(registry.shipped_info().id)}
    service.import_file(newer_release)
    with transaction() as session:
        pinned = registry.pinned(session, pins)
        current = registry.pinned(session, None)
    assert [c.info.version for c in pinned] == ["2022.3"]
    assert [c.info.version for c in current] == [NEW_RELEASE]
    assert WITHDRAWN in _linked(pinned[0], "SOC 2")
    assert WITHDRAWN not in _linked(current[0], "SOC 2")


def test_the_same_version_from_another_file_is_refused(
    embedded: Path, newer_release: Path, tmp_path: Path
) -> None:
    service.import_file(newer_release)
    other = tmp_path / "other.xlsx"
    book = openpyxl.load_workbook(newer_release)
    book.worksheets[0]["D2"] = "Reworded once more."
    book.save(other)
    with pytest.raises(ValueError, match="already imported from a different file"):
        service.import_file(other)
