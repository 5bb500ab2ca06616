"""The scope step on the real catalogues: one row per requirement, the union of SCF
controls, several frameworks at once, OSCAL baselines through the SCF crosswalk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.catalog import registry
from orchestrator.catalog.headings import headings
from orchestrator.catalog.importer import import_catalog
from orchestrator.catalog.matching import resolve
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.jobs.interface import JobFailure
from tests.support.services import Kit, add_standard_documents, open_kit
from workers.analysis.service import run_analysis_step


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    with open_kit(tmp_path) as kit:
        add_standard_documents(kit)
        kit.run_through(Step.RUN_SCF_PRE_ANALYSIS)
        yield kit


SOC2_CHOSEN = ["Availability", "confidentiality", "processing integrity", "P"]


def _crosswalk(name: str) -> dict[str, set[str]]:
    """The workbook's column as written, headings ("P1.0") included."""
    choice = resolve([registry.shipped_catalog()], name)
    assert choice is not None
    return {r.id: set(r.control_ids) for r in choice.framework.requirements}


def _requirements(name: str) -> dict[str, set[str]]:
    """The column's requirements: its ids less the group headings."""
    column = _crosswalk(name)
    return {rid: ids for rid, ids in column.items() if rid not in headings(column)}


def _scope(kit: Kit, **parameters: Any) -> dict[str, Any]:
    run_analysis_step(kit.context(Step.CREATE_SCOPE, **parameters))
    kit.session.commit()
    return kit.content(ArtifactKind.SCOPE)


def _controls(scope: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["control_id"]: c for d in scope["domains"] for c in d["controls"]}


def test_several_frameworks_scope_the_union_of_their_crosswalks(kit: Kit) -> None:
    scope = _scope(kit, frameworks=["SOC 2", "ISO 27001:2022"], categories=SOC2_CHOSEN)
    soc2, iso = _requirements("SOC 2"), _requirements("ISO/IEC 27001:2022")
    assert [f["name"] for f in scope["frameworks"]] == ["SOC 2", "ISO/IEC 27001:2022"]
    rows = {
        f["name"]: {r["requirement_id"]: set(r["controls"]) for r in f["requirements"]}
        for f in scope["frameworks"]
    }
    assert rows == {"SOC 2": soc2, "ISO/IEC 27001:2022": iso}
    union = set().union(*soc2.values(), *iso.values())
    controls = _controls(scope)
    assert set(controls) == union
    assert scope["summary"]["controls_in_scope"] == len(union)
    assert scope["summary"]["requirements"] == len(soc2) + len(iso)
    both = next(
        c for c in union if any(c in s for s in soc2.values()) and any(c in s for s in iso.values())
    )
    named = {r.split(" ", 1)[0] for r in controls[both]["requirements"]}
    assert {"SOC", "ISO/IEC"} <= named
    assert scope["framework"] == "SOC 2; ISO/IEC 27001:2022"
    assert scope["catalog"]["version"] == "2022.3"


def test_a_single_framework_still_works(kit: Kit) -> None:
    scope = _scope(kit, framework="PCI DSS 4.0")
    assert set(_controls(scope)) == set().union(*_requirements("PCI DSS 4.0").values())


def test_headings_are_never_requirement_rows(kit: Kit) -> None:
    """SOC 2's P1.0-P3.0 and CIS Controls' "4.0" head groups; they are not criteria."""
    for name, heading, chosen in (
        ("SOC 2", "P1.0", {"SOC 2": ["privacy"]}),
        ("CIS Controls 8.0", "4.0", None),
    ):
        column = _crosswalk(name)
        assert heading in column and heading in headings(column)
        scope = _scope(kit, framework=name, categories=chosen)
        [framework] = scope["frameworks"]
        ids = [r["requirement_id"] for r in framework["requirements"]]
        assert heading not in ids and heading in framework["headings_left_out"]
        assert not any(rid.endswith(".0") and rid[:-1] + "1" in ids for rid in ids)
        assert len(ids) == len(column) - len(headings(column))


def test_soc2_categories_not_chosen_are_out_of_scope_with_their_reason(kit: Kit) -> None:
    scope = _scope(kit, framework="SOC 2 Type II", categories=["Availability"])
    [soc2] = scope["frameworks"]
    rows = {r["requirement_id"]: r for r in soc2["requirements"]}
    assert {c["id"]: c["in_scope"] for c in soc2["categories"]} == {
        "security": True,
        "availability": True,
        "processing_integrity": False,
        "confidentiality": False,
        "privacy": False,
    }
    assert rows["CC6.1"]["in_scope"] and rows["CC6.1"]["category"] == "security"
    assert rows["A1.2"]["in_scope"] and rows["A1.2"]["category"] == "availability"
    for rid, category in (("P4.1", "Privacy"), ("PI1.2", "Processing Integrity"), ("C1.1", "")):
        assert not rows[rid]["in_scope"]
        assert rows[rid]["out_of_scope_reason"].startswith(f"Out of scope: the {category}")
        assert "Security is always in scope" in rows[rid]["out_of_scope_reason"]
    # Only the chosen categories' requirements bring controls into scope.
    scoped = set().union(*(set(r["controls"]) for r in rows.values() if r["in_scope"]))
    assert set(_controls(scope)) == scoped
    privacy_only = set(rows["P4.1"]["controls"]) - scoped
    assert privacy_only and not privacy_only & set(_controls(scope))


def test_security_alone_when_no_category_is_chosen(kit: Kit) -> None:
    [soc2] = _scope(kit, framework="SOC 2")["frameworks"]
    in_scope = {r["requirement_id"] for r in soc2["requirements"] if r["in_scope"]}
    assert in_scope and all(rid.startswith("CC") for rid in in_scope)
    assert soc2["summary"]["requirements_in_scope"] == len(in_scope)


@pytest.mark.parametrize(
    ("categories", "says"),
    [
        (["Integrity"], "SOC 2 has no category 'Integrity'; its categories: security"),
        ({"PCI DSS 4.0": ["privacy"]}, "not a selected framework"),
    ],
)
def test_an_unknown_category_fails_clearly(kit: Kit, categories: Any, says: str) -> None:
    with pytest.raises(JobFailure) as failure:
        run_analysis_step(kit.context(Step.CREATE_SCOPE, framework="SOC 2", categories=categories))
    assert failure.value.code == "unknown_category" and says in failure.value.message


def test_an_oscal_baseline_is_scoped_through_the_scf_crosswalk(kit: Kit, nist_dir: Path) -> None:
    import_catalog(kit.session, nist_dir / "NIST_SP-800-53_rev5.0.1_catalog.json")
    import_catalog(kit.session, nist_dir / "NIST_SP-800-53_rev5_MODERATE-baseline_profile.json")
    kit.session.commit()
    pins = registry.current_pins(kit.session)
    scope = _scope(kit, framework="NIST SP 800-53 rev5 Moderate", catalogs=pins)
    [moderate] = scope["frameworks"]
    assert moderate["kind"] == "oscal_profile" and len(moderate["requirements"]) == 287
    column = _crosswalk("NIST 800-53 rev5")
    for row in moderate["requirements"]:
        assert set(row["controls"]) == column.get(row["requirement_id"], set())
    assert moderate["catalog"]["licence"].startswith("Public domain")


def test_a_run_pinned_to_a_missing_catalogue_fails_clearly(kit: Kit) -> None:
    pins = {"Secure Controls Framework (SCF)": "00000000-0000-0000-0000-000000000000"}
    with pytest.raises(JobFailure) as failure:
        run_analysis_step(kit.context(Step.CREATE_SCOPE, framework="SOC 2", catalogs=pins))
    assert failure.value.code == "catalog_missing" and not failure.value.retryable
