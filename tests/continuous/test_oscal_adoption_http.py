"""Adopting a new version of a publication read from its own OSCAL catalogue (NIST SP
800-53), over HTTP, for an assessment whose approved SoA answers that framework: the diff
names the control reworded (its statement, verbatim before and after) and the control
removed; adopting it re-opens exactly those two requirements' rows (the reworded one judged
again, the removed one proposed not applicable) and carries the others over. A later SCF
release that links one more SCF control to a requirement through the workbook's 800-53
column re-opens that requirement's row too, now linked to it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.catalog import registry, service
from tests.api.conftest import Api
from tests.catalog.conftest import NIST_DIR
from tests.catalog.oscal_releases import write_subset
from tests.catalog.releases import rewrite_release
from tests.continuous.kit import Reviewed
from tests.support.http_lifecycle import through_soa_approval

TENANT = "tenant-oscal-adoption"
FRAMEWORK = "NIST SP 800-53 rev5"
CATALOG = NIST_DIR / "NIST_SP-800-53_rev5.0.1_catalog.json"
LOW = NIST_DIR / "NIST_SP-800-53_rev5_LOW-baseline_profile.json"
KEPT = ["AC-2", "AC-3", "AT-2", "AU-2", "CP-9", "IA-2", "IR-4", "RA-5"]
REWORDED, REMOVED, REMAPPED = "AC-2", "AU-2", "AC-3"
SUFFIX = " Review the accounts quarterly."
SCF_RELEASE = "2099.3"


def _name(requirement: str) -> str:
    return f"{FRAMEWORK} {requirement}"


def _rows(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        f"{r['framework']} {r['requirement_id']}": r for r in artifact["content"]["requirements"]
    }


class Adopting(Reviewed):
    def __init__(self, api: Api, tmp: Path) -> None:
        # The version in use when the run starts: the kept controls as NIST wrote them.
        first = write_subset(CATALOG, tmp / "sp800-53-5.0.1.json", version="5.0.1", keep=KEPT)
        assert service.import_file(first).created
        super().__init__(api, TENANT, "oscal-adoption")
        self.tmp = tmp
        through_soa_approval(api, self.owner, self.reviewer, self.run_id, self.decider, FRAMEWORK)
        self.base = self.approved_soa()
        second = write_subset(
            CATALOG,
            tmp / "sp800-53-5.1.1.json",
            version="5.1.1",
            keep=[c for c in KEPT if c != REMOVED],
            reworded={REWORDED: SUFFIX},
        )
        assert service.import_file(second).created

    def adopted(self, key: str, target: str, reason: str) -> dict[str, Any]:
        answer = self.adopt(key, target, reason)
        assert answer.status_code == 201, answer.text
        return dict(answer.json())


@pytest.fixture(scope="module")
def adopting(running_api: Api, tmp_path_factory: pytest.TempPathFactory) -> Adopting:
    if not CATALOG.is_file():
        pytest.skip(f"{CATALOG} is absent (../shared/data: see SOURCES.md)")
    return Adopting(running_api, tmp_path_factory.mktemp("oscal"))


def test_the_soa_answers_the_oscal_framework(adopting: Adopting) -> None:
    rows = _rows(adopting.base)
    assert set(rows) == {_name(c) for c in KEPT}
    assert rows[_name(REWORDED)]["scf_controls"], "AC-2 links SCF controls through the crosswalk"


def test_a_new_oscal_version_reopens_the_reworded_and_removed_requirements(
    adopting: Adopting,
) -> None:
    diff = adopting.get(
        f"/api/v1/assessments/{adopting.assessment}/catalogue-diff?to={FRAMEWORK} 5.1.1"
    )
    assert (diff["from"]["version"], diff["to"]["version"]) == ("5.0.1", "5.1.1")
    assert diff["removed"] == [REMOVED] and diff["added"] == []
    (reworded,) = diff["reworded"]
    assert reworded["control_id"] == REWORDED and reworded["fields"] == ["description"]
    assert reworded["after"]["description"] == reworded["before"]["description"] + SUFFIX
    assert set(diff["affected_rows"]) == {_name(REWORDED), _name(REMOVED)}

    adoption = adopting.adopted("adopt-5.1.1", f"{FRAMEWORK} 5.1.1", "NIST released 5.1.1")
    assert adoption["status"] == "adopted"
    assert set(adoption["reopened_rows"]) == {_name(REWORDED), _name(REMOVED)}
    found = adopting.evaluated(adoption["reassessment_id"])
    assert found["status"] == "awaiting_approval", found
    assert {r["row"] for r in found["changed_rows"]} == {_name(REWORDED), _name(REMOVED)}

    result = _rows(adopting.artifact(found["result_artifact_id"]))
    base = _rows(adopting.base)
    for name, row in result.items():
        if name not in (_name(REWORDED), _name(REMOVED)):
            assert row == base[name]  # carried over, as approved
    removed = result[_name(REMOVED)]
    assert removed["applicable"] is False and removed["excluded_by"] == "catalogue"
    assert removed["scf_controls"] == [] and "removed or withdrawn" in removed["justification"]
    reworded_row = result[_name(REWORDED)]
    assert reworded_row["applicable"] is True
    assert reworded_row["scf_controls"] == base[_name(REWORDED)]["scf_controls"]
    assert reworded_row["reassessed"]["based_on_version"] == adopting.base["version"]
    assert adopting.approve_rows(found)["status"] == "approved"


def test_an_scf_remap_through_the_crosswalk_reopens_the_oscal_row(adopting: Adopting) -> None:
    """The workbook's 800-53 column links AC-3 to one more SCF control in a new SCF
    release: the OSCAL framework's AC-3 row links through that column, so it re-opens."""
    column_framework = registry.shipped_catalog().framework(FRAMEWORK)
    assert column_framework is not None
    column = " ".join(str(column_framework.details["columns"][0]).split())
    linked = set(_rows(adopting.approved_soa())[_name(REMAPPED)]["scf_controls"])
    gains = next(c.id for c in registry.shipped_catalog().controls if c.id not in linked)

    def edit(values: list[object], keys: list[str]) -> list[list[object]]:
        if values[keys.index("SCF #")] == gains:
            at = keys.index(column)
            values[at] = "\n".join(filter(None, [values[at], REMAPPED]))  # type: ignore[list-item]
        return [values]

    path = rewrite_release(
        registry.shipped_path(), adopting.tmp / f"SCF_{SCF_RELEASE}.xlsx", SCF_RELEASE, edit
    )
    assert service.import_file(path).created
    adoption = adopting.adopted("adopt-scf", SCF_RELEASE, f"SCF {SCF_RELEASE} published")
    assert adoption["reopened_rows"] == [_name(REMAPPED)]
    found = adopting.evaluated(adoption["reassessment_id"])
    assert [r["row"] for r in found["changed_rows"]] == [_name(REMAPPED)]
    result = _rows(adopting.artifact(found["result_artifact_id"]))
    assert set(result[_name(REMAPPED)]["scf_controls"]) == linked | {gains}


def test_a_profile_version_is_refused_in_words(adopting: Adopting) -> None:
    """A baseline's new version changes which controls it selects: not a re-opening."""
    document = json.loads(LOW.read_text(encoding="utf-8"))
    document["profile"]["imports"][0]["include-controls"] = [{"with-ids": ["ac-2", "ac-3"]}]
    path = adopting.tmp / "low-baseline.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    imported = service.import_file(path)
    assert imported.info.kind == "oscal_profile"
    target = f"{imported.info.name} {imported.info.version}"
    refused = adopting.adopt("adopt-low", target, "new baseline")
    assert refused.status_code == 422, refused.text
    assert "is an OSCAL profile" in refused.json()["detail"]
