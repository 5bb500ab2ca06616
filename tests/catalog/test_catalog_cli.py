"""`lifecycle catalog ...` and `lifecycle framework ...` through the click app."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import here


def test_import_list_and_show_from_the_command_line(embedded: Path, nist_dir: Path) -> None:
    catalog = str(nist_dir / "NIST_SP-800-53_rev5.0.1_catalog.json")
    first = here("catalog", "import", catalog)
    assert first.exit_code == 0, first.output
    assert first.output.startswith("imported NIST SP 800-53 rev5 5.0.1")
    again = here("catalog", "import", catalog)
    assert "already imported, nothing changed" in again.output
    listed = json.loads(here("catalog", "list", "--json").output)["items"]
    assert {(c["name"], c["version"], c["current"]) for c in listed} == {
        ("Secure Controls Framework (SCF)", "2022.3", True),
        ("NIST SP 800-53 rev5", "5.0.1", True),
    }
    shown = json.loads(here("framework", "show", "SOC 2 Type II", "--json").output)
    # 64 ids in the workbook's TSC column, less the three headings P1.0-P3.0.
    assert (shown["name"], shown["requirements"], shown["linked_controls"]) == ("SOC 2", 61, 283)
    assert [c["id"] for c in shown["categories"]][0] == "security"
    assert {i["category"] for i in shown["items"]} == {
        "security",
        "availability",
        "processing_integrity",
        "confidentiality",
        "privacy",
    }
    text = here("framework", "show", "NIST SP 800-53 rev5").output
    assert "AC-2(1)" in text and "from NIST SP 800-53 rev5 5.0.1" in text


def test_refusals_exit_one_with_the_reason(embedded: Path, tmp_path: Path) -> None:
    unknown = here("framework", "show", "ISO 27001 2023")
    assert unknown.exit_code == 1
    assert "did you mean ISO/IEC 27001:2022" in unknown.output
    bad = tmp_path / "scf.xlsx"
    bad.write_text("not a workbook")
    refused = here("catalog", "import", str(bad))
    assert refused.exit_code == 1 and "not a readable xlsx" in refused.output
    assert here("catalog", "diff", "2022.3", "1999.1").exit_code == 1
