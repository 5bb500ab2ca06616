"""Adopting a new catalogue version, over HTTP, for an assessment with an approved SoA
(SOC 2): the diff names exactly the control reworded, the control removed and the
requirement remapped of a newer SCF release written from the shipped workbook; adopting it
re-opens exactly the rows they affect and carries every other row over; adopting it again
changes nothing; an unknown version is a 404."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orchestrator.catalog import registry, service
from tests.api.conftest import Api
from tests.catalog.releases import rewrite_release
from tests.continuous.kit import Reviewed
from tests.support.cli import here, here_json
from tests.support.http_lifecycle import through_soa_approval

TENANT = "tenant-adoption"
RELEASE = "2099.2"
FRAMEWORK = "SOC 2"
SUFFIX = " Reviewed annually."


def _name(row: dict[str, Any]) -> str:
    return f"{row['framework']} {row['requirement_id']}"


def _newer_release(target: Path, reworded: str, removed: str, requirement: str, gains: str) -> str:
    """The shipped workbook, row for row, as release RELEASE: `reworded`'s description with
    a sentence added, `removed` withdrawn, and SOC 2 `requirement` linked to `gains` too.
    Returns the description written."""
    written: list[str] = []
    soc2 = registry.shipped_catalog().framework(FRAMEWORK)
    assert soc2 is not None
    column = " ".join(str(soc2.details["columns"][0]).split())

    def edit(values: list[object], keys: list[str]) -> list[list[object]]:
        at_id = keys.index("SCF #")
        if values[at_id] == removed:
            return []
        if values[at_id] == reworded:
            at_description = keys.index("Secure Controls Framework (SCF) Control Description")
            values[at_description] = f"{values[at_description]}{SUFFIX}"
            written.append(str(values[at_description]))
        if values[at_id] == gains:
            at_soc2 = keys.index(column)
            values[at_soc2] = "\n".join(filter(None, [values[at_soc2], requirement]))  # type: ignore[list-item]
        return [values]

    rewrite_release(registry.shipped_path(), target, RELEASE, edit)
    return written[0] if written else ""


class Adopting(Reviewed):
    def __init__(self, api: Api, tmp: Path) -> None:
        super().__init__(api, TENANT, "adoption-2027")
        through_soa_approval(api, self.owner, self.reviewer, self.run_id, self.decider, FRAMEWORK)
        self.base = self.approved_soa()
        rows = [r for r in self.base["content"]["requirements"] if r["framework"] == FRAMEWORK]
        # Three edits, each on controls no other edit touches.
        with_controls = [r for r in rows if r.get("applicable") and r["scf_controls"]]
        first, second = with_controls[0], with_controls[1]
        self.reworded = first["scf_controls"][0]
        self.removed = next(c for c in second["scf_controls"] if c != self.reworded)
        soc2 = registry.shipped_catalog().framework(FRAMEWORK)
        assert soc2 is not None
        links = {r.id: r.control_ids for r in soc2.requirements}
        self.remapped = next(
            r["requirement_id"]
            for r in rows
            if {self.reworded, self.removed}.isdisjoint(links[r["requirement_id"]])
            and r is not first
            and r is not second
        )
        self.gains = next(
            c.id
            for c in registry.shipped_catalog().controls
            if c.id not in links[self.remapped] and c.id not in (self.reworded, self.removed)
        )
        self.expected = {
            _name(r)
            for r in rows
            if {self.reworded, self.removed} & set(r["scf_controls"])
            or r["requirement_id"] == self.remapped
        }
        path = tmp / f"SCF_{RELEASE}.xlsx"
        self.rewording = _newer_release(
            path, self.reworded, self.removed, self.remapped, self.gains
        )
        assert service.import_file(path).created

    def adopt(self, key: str, target: str = RELEASE, reason: str = "SCF 2099.2 published") -> Any:
        return super().adopt(key, target, reason)


@pytest.fixture(scope="module")
def adopting(running_api: Api, tmp_path_factory: pytest.TempPathFactory) -> Adopting:
    return Adopting(running_api, tmp_path_factory.mktemp("release"))


def test_the_diff_names_exactly_what_the_release_changed(adopting: Adopting) -> None:
    diff = adopting.get(f"/api/v1/assessments/{adopting.assessment}/catalogue-diff?to={RELEASE}")
    assert diff["from"]["version"] == "2022.3" and diff["to"]["version"] == RELEASE
    assert diff["added"] == []
    assert diff["removed"] == [adopting.removed]
    (reworded,) = diff["reworded"]
    original = next(c for c in registry.shipped_catalog().controls if c.id == adopting.reworded)
    assert reworded == {
        "control_id": adopting.reworded,
        "fields": ["description"],
        "before": {"description": original.description},
        "after": {"description": adopting.rewording.strip()},  # verbatim, as written
    }
    (remapped,) = diff["remapped"]
    assert (remapped["framework"], remapped["requirement_id"]) == (FRAMEWORK, adopting.remapped)
    assert set(remapped["after"]) == {*remapped["before"], adopting.gains}
    assert set(diff["affected_rows"]) == adopting.expected
    # The command line shows the same diff.
    assert here_json("catalog", "adopt", adopting.assessment, RELEASE, "--dry-run") == diff


def test_an_unknown_version_is_a_404(adopting: Adopting) -> None:
    url = f"/api/v1/assessments/{adopting.assessment}/catalogue-diff?to=1999.9"
    missing = adopting.api.client.get(url, headers=adopting.owner)
    assert missing.status_code == 404 and "1999.9" in missing.text, missing.text
    refused = adopting.adopt("unknown", target="1999.9")
    assert refused.status_code == 404, refused.text
    no_reason = adopting.adopt("no-reason", reason="")
    assert no_reason.status_code == 422, no_reason.text
    assert adopting.reassessments() == []


def test_adoption_reopens_exactly_the_affected_rows(adopting: Adopting) -> None:
    answer = adopting.adopt("adopt-2099.2")
    assert answer.status_code == 201, answer.text
    adoption = answer.json()
    assert adoption["status"] == "adopted" and not adoption["duplicate"]
    assert set(adoption["reopened_rows"]) == adopting.expected
    found = adopting.evaluated(adoption["reassessment_id"])
    assert found["trigger"] == "catalogue_adoption", found
    assert found["status"] == "awaiting_approval", found
    assert {r["row"] for r in found["changed_rows"]} == adopting.expected
    result = adopting.artifact(found["result_artifact_id"])
    base = {_name(r): r for r in adopting.base["content"]["requirements"]}
    for row in result["content"]["requirements"]:
        name = _name(row)
        if name not in adopting.expected:
            assert row == base[name]  # carried over, as approved
            continue
        assert adopting.removed not in row["scf_controls"]
        assert row["reassessed"]["before"]["scf_controls"] == base[name]["scf_controls"]
    remapped = next(
        r for r in result["content"]["requirements"] if r["requirement_id"] == adopting.remapped
    )
    assert adopting.gains in remapped["scf_controls"]

    # The assessment now uses the new version; the adoption is audited.
    run = adopting.get(f"/api/v1/workflows/{adopting.run_id}")
    new_id = adoption["to_catalog_id"]
    assert new_id in run["context"]["catalogs"].values()
    audit = adopting.get(f"/api/v1/workflows/{adopting.run_id}/audit")
    events = audit["items"] if isinstance(audit, dict) else audit
    adopted = [e for e in events if e["event_type"] == "lifecycle_workflow_catalogue_adopted"]
    assert len(adopted) == 1 and adopted[0]["metadata"]["reason"] == "SCF 2099.2 published"

    # The reviewer approves the re-opened rows; the version becomes approved.
    assert adopting.approve_rows(found)["status"] == "approved"


def test_adopting_the_same_version_again_changes_nothing(adopting: Adopting) -> None:
    before = adopting.reassessments()
    again = adopting.adopt("adopt-2099.2")
    assert again.status_code == 200 and again.json()["duplicate"], again.text
    conflict = adopting.adopt("adopt-2099.2", reason="another reason")
    assert conflict.status_code == 409, conflict.text
    other_key = adopting.adopt("adopt-2099.2-again")
    assert other_key.status_code == 200, other_key.text
    assert other_key.json()["status"] == "already_in_use"
    assert other_key.json()["reopened_rows"] == []
    assert adopting.reassessments() == before
    listed = adopting.get(f"/api/v1/assessments/{adopting.assessment}/catalogue-adoptions")
    assert len(listed) == 1
    diff = adopting.get(f"/api/v1/assessments/{adopting.assessment}/catalogue-diff?to={RELEASE}")
    assert (diff["added"], diff["removed"], diff["reworded"], diff["remapped"]) == ([], [], [], [])
    assert diff["affected_rows"] == []


def test_the_command_line_adopts_and_refuses_the_same_way(adopting: Adopting) -> None:
    unknown = here("catalog", "adopt", adopting.assessment, "1999.9", "--dry-run")
    assert unknown.exit_code == 1 and "1999.9" in unknown.output, unknown.output
    dry = here("catalog", "adopt", adopting.assessment, RELEASE, "--dry-run")
    assert dry.exit_code == 0 and f"{RELEASE} -> {RELEASE}" in dry.output, dry.output
    assert "rows re-opened (0)" in dry.output
    again = here("catalog", "adopt", adopting.assessment, RELEASE, "--reason", "again")
    assert again.exit_code == 0, again.output
    assert again.output.startswith("already_in_use: 0 rows re-opened"), again.output
    assert len(adopting.reassessments()) == 1
