"""The scope step on the real catalogues: one row per requirement, the union of SCF
controls, several frameworks at once, OSCAL baselines through the SCF crosswalk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.catalog import registry
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


def _crosswalk(name: str) -> dict[str, set[str]]:
    choice = resolve([registry.shipped_catalog()], name)
    assert choice is not None
    return {r.id: set(r.control_ids) for r in choice.framework.requirements}


def _scope(kit: Kit, **parameters: Any) -> dict[str, Any]:
    run_analysis_step(kit.context(Step.CREATE_SCOPE, **parameters))
    kit.session.commit()
    return kit.content(ArtifactKind.SCOPE)


def _controls(scope: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["control_id"]: c for d in scope["domains"] for c in d["controls"]}


def test_several_frameworks_scope_the_union_of_their_crosswalks(kit: Kit) -> None:
    scope = _scope(kit, frameworks=["SOC 2", "ISO 27001:2022"])
    soc2, iso = _crosswalk("SOC 2"), _crosswalk("ISO/IEC 27001:2022")
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
    assert set(_controls(scope)) == set().union(*_crosswalk("PCI DSS 4.0").values())


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
