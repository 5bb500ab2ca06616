"""The rules behind signable findings, on the shipped SCF workbook: methods to comply
without products, sub-items rolled into their requirement, NIST ids reached through a
base control, and the conclusion check's stated rule."""

from __future__ import annotations

from orchestrator.catalog.registry import shipped_catalog
from orchestrator.catalog.scf_frameworks import requirement_of
from tests.support.draft_quality import names_a_product
from workers.analysis.method_steps import generic_methods
from workers.analysis.nist_crosswalk import nist_by_scf, nist_ids_with_basis
from workers.analysis.requirement_rollup import rolled_up
from workers.reporting.conclusion_check import conclusion_warning
from workers.reporting.figures import Figures


def test_no_generic_method_of_the_workbook_names_a_product() -> None:
    catalog = shipped_catalog()
    kept = [m for c in catalog.controls for m in generic_methods(catalog, c)]
    assert len(kept) > 200  # the practices stay
    assert [m for m in kept if names_a_product(m)] == []
    # CHG-01 lists products with URLs beside one practice library.
    change = catalog.control("CHG-01")
    assert change is not None
    assert generic_methods(catalog, change) == ["ITIL infrastructure library"]


def test_sub_items_roll_into_their_requirement() -> None:
    assert requirement_of("6.1.2(a)(1)") == "6.1.2" and requirement_of("A.5.7") == "A.5.7"
    rows = [
        {"framework": "ISO", "requirement_id": i}
        for i in ("6.1.2", "6.1.2(a)", "6.1.2(a)(1)", "6.1.3", "A.5.1")
    ]
    grouped = rolled_up(rows)
    assert [g.label for g in grouped] == ["ISO 6.1.2", "ISO 6.1.3", "ISO A.5.1"]
    assert grouped[0].sub_items(grouped[0].rows) == ["6.1.2(a)", "6.1.2(a)(1)"]


def test_nist_ids_come_from_the_control_or_its_base_or_say_why_not() -> None:
    crosswalk = nist_by_scf(shipped_catalog())
    ids, basis = nist_ids_with_basis(crosswalk, ["PRI-07.1"])
    assert ids and "base controls PRI-07" in basis
    assert nist_ids_with_basis(crosswalk, []) == (
        [],
        "no SCF control in scope links to the requirement, so none maps to NIST",
    )


def _figures(gaps: int, requirements: int) -> Figures:
    return Figures(0, 0, 0, {}, requirements, requirements - gaps, gaps, {}, 0)


def test_a_conclusion_the_figures_contradict_is_flagged_by_the_stated_rule() -> None:
    said = "The documented controls address most requirements in scope."
    warning = conclusion_warning(said, _figures(36, 38))
    assert warning and "36 of the 38 requirements in scope are gaps" in warning
    assert conclusion_warning(said, _figures(5, 38)) is None
    assert conclusion_warning("Significant gaps remain.", _figures(2, 38))
    assert conclusion_warning("Significant gaps remain.", _figures(30, 38)) is None
    assert conclusion_warning(None, _figures(36, 38)) is None
