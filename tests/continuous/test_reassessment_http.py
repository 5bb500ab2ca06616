"""Reassessment of what changed, over HTTP, after a whole assessment: a new version of a
cited document re-opens exactly the rows it touches, reviewers approve only those rows,
a version whose text did not change makes no SoA version, and an expiry reminds the owner
and then re-opens what cited the document."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest

from orchestrator.sweeps.evidence_expiry import sweep_evidence_expiry
from tests.api.conftest import SAMPLES, Api, waiting_at
from tests.continuous.kit import POLICY, new_policy_version
from tests.support.http_lifecycle import drive_to_completion, select_framework
from tests.support.polling import poll

TENANT = "tenant-continuous"


class Assessed:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.owner = api.key("signal", "read", tenant=TENANT, principal="user:owner@acme")
        self.reviewer = api.key(
            "approve", "read", tenant=TENANT, principal="user:reviewer@acme", roles=("assessor",)
        )
        decider = api.key("approve", "read", tenant=TENANT, principal="user:control-owner@acme")
        self.assessment = api.create_assessment(self.owner)["id"]
        api.upload_samples(self.owner, self.assessment)
        started = api.start(self.owner, self.assessment, "continuous-2027")
        assert started.status_code == 201, started.text
        self.run_id = started.json()["id"]
        drive_to_completion(api, self.owner, self.reviewer, self.run_id, decider)

    def get(self, url: str) -> Any:
        response = self.api.client.get(url, headers=self.owner)
        assert response.status_code == 200, response.text
        return response.json()

    def documents(self) -> dict[str, str]:
        listed = self.get(f"/api/v1/assessments/{self.assessment}/documents")
        return {d["filename"]: d["id"] for d in listed}

    def soa_versions(self) -> list[dict[str, Any]]:
        return self.versions("soa")

    def versions(self, kind: str) -> list[dict[str, Any]]:
        listed = self.get(f"/api/v1/workflows/{self.run_id}/artifacts")
        items = listed["items"] if isinstance(listed, dict) else listed
        return sorted((a for a in items if a["kind"] == kind), key=lambda a: int(a["version"]))

    def approved(self, kind: str) -> dict[str, Any]:
        last = [a for a in self.versions(kind) if a["status"] == "approved"][-1]
        return self.soa(last["id"])

    def soa(self, artifact_id: str) -> dict[str, Any]:
        return dict(self.get(f"/api/v1/workflows/{self.run_id}/artifacts/{artifact_id}"))

    def new_version(self, document: str, name: str, content: bytes) -> str:
        response = self.api.client.post(
            f"/api/v1/assessments/{self.assessment}/documents/{document}/versions",
            headers=self.owner,
            files={"file": (name, content, "text/markdown")},
        )
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def settled(self, count: int) -> dict[str, Any]:
        """The `count`th reassessment, once evaluated."""
        url = f"/api/v1/assessments/{self.assessment}/reassessments"
        listed = poll(
            lambda: self.get(url),
            lambda found: len(found) >= count and found[count - 1]["status"] != "pending",
            timeout_s=120,
            what="the reassessment's evaluation",
        )
        return dict(listed[count - 1])


@pytest.fixture(scope="module")
def assessed(running_api: Api) -> Assessed:
    return Assessed(running_api)


def _citing(content: dict[str, Any], filename: str) -> set[str]:
    return {
        f"{row['framework']} {row['requirement_id']}"
        for row in content["content"]["requirements"]
        if any(c.get("document") == filename for c in row.get("evidence", []))
    }


def test_a_version_with_the_same_text_makes_no_version(assessed: Assessed) -> None:
    before = assessed.soa_versions()
    policy = assessed.documents()[POLICY]
    same_text = (SAMPLES / POLICY).read_bytes().replace(b"\n", b"\r\n")
    assessed.new_version(policy, POLICY, same_text)
    found = assessed.settled(1)
    assert found["status"] == "no_change", found
    assert found["result_artifact_id"] is None and found["changed_rows"] == []
    assert found["figures"]["rows_changed"] == 0
    assert found["figures"]["rows_reevaluated"] >= 1
    assert assessed.soa_versions() == before


def test_a_new_version_reopens_exactly_the_rows_it_touches(assessed: Assessed) -> None:
    approved = [a for a in assessed.soa_versions() if a["status"] == "approved"][-1]
    base = assessed.soa(approved["id"])
    gaps_before, poam_before = assessed.approved("gap_analysis"), assessed.approved("poam")
    cited = _citing(base, POLICY)
    assert cited, "the sample policy is cited by the approved SoA"
    policy = assessed.documents()[POLICY]
    new_policy_version(assessed.api, assessed.owner, assessed.assessment, policy)
    found = assessed.settled(2)
    assert found["status"] == "awaiting_approval", found
    figures = found["figures"]
    assert figures["rows_reevaluated"] <= figures["rows_touched"] < figures["rows"]
    assert figures["rows_carried"] == figures["rows"] - figures["rows_changed"]
    changed = {row["row"] for row in found["changed_rows"]}
    assert changed and changed <= cited
    result = assessed.soa(found["result_artifact_id"])
    assert result["status"] == "reassessment"
    assert result["content"]["reassessment"]["based_on"] == {
        "artifact_id": approved["id"],
        "version": approved["version"],
        "approved_by": ["user:reviewer@acme"],
    }
    by_name = {
        f"{r['framework']} {r['requirement_id']}": r for r in base["content"]["requirements"]
    }
    for row in result["content"]["requirements"]:
        name = f"{row['framework']} {row['requirement_id']}"
        if name in changed:
            assert row["reassessed"]["based_on_version"] == approved["version"]
        else:
            assert row == by_name[name]  # carried over, as approved

    # Only the changed rows ask approval, each bound to the content read.
    url = f"/api/v1/reassessments/{found['id']}/row-approvals"
    stale = assessed.api.client.post(
        url,
        headers=assessed.reviewer,
        json={"row": found["changed_rows"][0]["row"], "row_sha256": "0" * 64},
    )
    assert stale.status_code == 422 and stale.json()["reason"] == "stale_row", stale.text
    unchanged = next(iter(set(by_name) - changed))
    refused = assessed.api.client.post(
        url, headers=assessed.reviewer, json={"row": unchanged, "row_sha256": "0" * 64}
    )
    assert refused.status_code == 422, refused.text
    by_owner = assessed.api.client.post(
        url,
        headers=assessed.owner,
        json={"row": found["changed_rows"][0]["row"], "row_sha256": "0" * 64},
    )
    assert by_owner.status_code == 403, by_owner.text
    follow_on = _check_follow_on(assessed, found, result, gaps_before, poam_before)
    for row in found["changed_rows"]:
        answer = assessed.api.client.post(
            url,
            headers=assessed.reviewer,
            json={"row": row["row"], "row_sha256": row["row_sha256"], "comment": "checked"},
        )
        assert answer.status_code == 200, answer.text
    final = answer.json()
    assert final["status"] == "approved"
    assert {r["approved_by"] for r in final["changed_rows"]} == {"user:reviewer@acme"}
    assert assessed.soa(found["result_artifact_id"])["status"] == "approved"
    assert [assessed.soa(a)["status"] for a in follow_on] == ["approved"] * len(follow_on)


GAP_STATES = {"no_evidence_found", "weak_evidence", "template_not_adopted"}


def _check_follow_on(
    assessed: Assessed,
    found: dict[str, Any],
    soa: dict[str, Any],
    gaps_before: dict[str, Any],
    poam_before: dict[str, Any],
) -> list[str]:
    """The changed rows carried into the gap analysis and the POA&M, and nothing else:
    a changed row is a finding exactly when its new proposal is a gap; every other
    finding and item is the approved one; an item keeps its POAM ID. Returns the new
    versions' ids."""
    follow = {d["kind"]: d for d in found["follow_on"]}
    assert set(follow) == {"gap_analysis", "poam"}, found["follow_on"]
    assert all(d["status"] == "reassessment" for d in follow.values())
    gaps = assessed.soa(follow["gap_analysis"]["artifact_id"])["content"]
    poam = assessed.soa(follow["poam"]["artifact_id"])["content"]
    changed = {r["row"]: r for r in found["changed_rows"]}
    reopened = set(gaps["reassessment"]["changed_rows"])
    assert reopened and reopened <= set(changed)
    assert found["figures"]["findings_changed"] == len(reopened)
    assert gaps["reassessment"]["based_on"]["version"] == gaps_before["version"]
    old_gaps = {g["control_id"]: g for g in gaps_before["content"]["gaps"]}
    new_gaps = {g["control_id"]: g for g in gaps["gaps"]}
    fresh = {
        f"{r['framework']} {r['requirement_id']}": r
        for r in soa["content"]["requirements"]
        if "reassessed" in r
    }
    for name, finding in new_gaps.items():
        if name not in reopened:
            assert finding == old_gaps[name], name  # carried, as approved
    for name in reopened:
        is_gap = fresh[name]["applicable"] and fresh[name]["proposal"] in GAP_STATES
        assert (name in new_gaps) == is_gap, name
        drafts = changed[name]["drafts"]
        if is_gap:
            assert new_gaps[name]["evidence_state"] == fresh[name]["proposal"]
            assert drafts["gap_analysis"]["change"] == ("changed" if name in old_gaps else "opened")
        else:
            assert drafts["gap_analysis"] == {"change": "closed", "row": None}
    assert gaps["summary"]["gaps"] == len(gaps["gaps"])
    old_items = {i["control_id"]: i for i in poam_before["content"]["items"]}
    new_items = {i["control_id"]: i for i in poam["items"]}
    assert set(new_items) == set(new_gaps)
    for name, item in new_items.items():
        if name not in reopened:
            assert item == old_items[name], name
        elif name in old_items:
            assert item["id"] == old_items[name]["id"]  # the POAM ID stays
    closed = {i["control_id"] for i in poam["closed_items"]}
    assert closed >= {n for n in reopened if n in old_items and n not in new_items}
    return [follow["gap_analysis"]["artifact_id"], follow["poam"]["artifact_id"]]


def test_an_expiry_reminds_then_reopens_what_cited_it(assessed: Assessed) -> None:
    document = assessed.documents()["incident-response-plan.md"]
    life_url = f"/api/v1/assessments/{assessed.assessment}/documents/{document}/life"
    soon = (date.today() + timedelta(days=7)).isoformat()
    body = {"owner": "user:ir-lead@acme", "expires_on": soon}
    assert assessed.api.client.put(life_url, headers=assessed.owner, json=body).status_code == 200
    assert sweep_evidence_expiry()["reminded"] >= 1
    queue = assessed.get("/api/v1/evidence/queue?owner=user:ir-lead@acme")
    assert [d["id"] for d in queue] == [document] and queue[0]["reminded_at"]
    assert (
        assessed.get(f"/api/v1/assessments/{assessed.assessment}/reassessments")[-1]["trigger"]
        == "new_version"
    )  # a reminder re-opens nothing

    body["expires_on"] = date.today().isoformat()
    assert assessed.api.client.put(life_url, headers=assessed.owner, json=body).status_code == 200
    assert sweep_evidence_expiry()["expired"] >= 1
    found = assessed.settled(3)
    assert found["trigger"] == "expired" and found["changed_documents"] == [document]
    assert found["status"] == "awaiting_approval", found
    base = assessed.soa(found["base_artifact_id"])
    assert {r["row"] for r in found["changed_rows"]} <= _citing(base, "incident-response-plan.md")
    result = assessed.soa(found["result_artifact_id"])
    for row in result["content"]["requirements"]:
        if "reassessed" in row:
            assert all(c["document"] != "incident-response-plan.md" for c in row["evidence"])


def test_next_period_starts_from_the_approved_rows_and_their_approvers(
    assessed: Assessed,
) -> None:
    api = assessed.api
    last = [a for a in assessed.soa_versions() if a["status"] == "approved"][-1]
    approved_rows = {
        f"{r['framework']} {r['requirement_id']}": r
        for r in assessed.soa(last["id"])["content"]["requirements"]
    }
    created = api.client.post(
        "/api/v1/assessments",
        headers=assessed.owner,
        json={
            "organization_id": "acme-org",
            "name": "2028 SCF assessment",
            "carry_over_from": assessed.assessment,
        },
    )
    assert created.status_code == 201, created.text
    assert created.json()["carry_over_from"] == assessed.assessment
    next_year = created.json()["id"]
    api.upload_samples(assessed.owner, next_year)
    started = api.start(assessed.owner, next_year, "continuous-2028")
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]
    api.follow(
        assessed.owner, run_id, waiting_at("wait_for_framework_selection", "waiting_for_input")
    )
    assert select_framework(api, assessed.owner, run_id)["fate"] == "applied"
    api.follow(assessed.owner, run_id, waiting_at("wait_for_soa_approval"), timeout_s=300)
    (soa_id,) = [
        a["id"] for a in assessed.get(f"/api/v1/workflows/{run_id}/artifacts") if a["kind"] == "soa"
    ]
    draft = dict(assessed.get(f"/api/v1/workflows/{run_id}/artifacts/{soa_id}"))["content"]
    carried = draft["carried_forward"]
    assert carried["assessment_id"] == assessed.assessment
    assert carried["artifact_id"] == last["id"]
    assert "user:reviewer@acme" in carried["approved_by"]
    assert carried["rows"], "last year's decided rows are carried"
    for entry in carried["rows"]:
        name = f"{entry['framework']} {entry['requirement_id']}"
        row = next(
            r for r in draft["requirements"] if f"{r['framework']} {r['requirement_id']}" == name
        )
        for field in entry["fields"]:
            assert row[field] == approved_rows[name][field], (name, field)
