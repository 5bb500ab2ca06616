"""Reviewer amendments through HTTP: a changed row makes the draft's next version, the
approval binds to that version, and who, when and why are kept."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api, Headers, waiting_at
from tests.support.http_lifecycle import approve_current, select_framework


def _soa_versions(api: Api, headers: Headers, run_id: str) -> dict[int, dict[str, Any]]:
    listed = api.client.get(
        f"/api/v1/workflows/{run_id}/artifacts", headers=headers, params={"kind": "soa"}
    )
    assert listed.status_code == 200, listed.text
    return {a["version"]: a for a in listed.json()}


def test_an_amendment_is_the_next_version_and_the_approval_binds_to_it(running_api: Api) -> None:
    api = running_api
    owner = api.key("signal", "read", tenant="tenant-amend", principal="user:owner@acme")
    reviewer = api.key(
        "approve",
        "read",
        tenant="tenant-amend",
        principal="user:reviewer@acme",
        roles=("assessor",),
    )
    assessment = api.create_assessment(owner)
    api.upload_samples(owner, assessment["id"])
    # This test is about versions and who amends: the SoA gate does not ask for decisions.
    policies = {"approval_policies": {"soa": {"require_decided": False}}}
    run_id = api.start(owner, assessment["id"], "amend-1", policies).json()["id"]
    run = api.follow(owner, run_id, waiting_at("wait_for_framework_selection", "waiting_for_input"))
    assert select_framework(api, owner, run_id)["fate"] == "applied"
    run = api.follow(owner, run_id, waiting_at("wait_for_soa_approval"))
    first = _soa_versions(api, owner, run_id)[1]
    content = api.client.get(
        f"/api/v1/workflows/{run_id}/artifacts/{first['id']}", headers=owner
    ).json()["content"]
    first_row = next(r for r in content["requirements"] if r["applicable"])
    row = first_row["requirement_id"]  # SoA rows are named by their requirement id
    assert first_row["implementation_status"] is None and first_row["owner"] is None
    url = f"/api/v1/workflows/{run_id}/artifacts/{first['id']}/amendments"

    refused = api.client.post(
        url,
        headers=reviewer,
        json={"reason": "out of scope", "rows": [{"row": row, "changes": {"applicable": False}}]},
    )
    assert refused.status_code == 422, refused.text
    assert "justification" in refused.text
    unknown = api.client.post(
        url,
        headers=reviewer,
        json={"reason": "typo", "rows": [{"row": "NOPE-99", "changes": {"owner": "CISO"}}]},
    )
    assert unknown.status_code == 422 and "NOPE-99" in unknown.text
    wrong = api.client.post(
        url,
        headers=reviewer,
        json={"reason": "x", "rows": [{"row": row, "changes": {"implementation_status": "done"}}]},
    )
    assert wrong.status_code == 422 and "implementation_status" in wrong.text

    body = {
        "reason": "no cardholder data on site",
        "rows": [
            {
                "row": row,
                "changes": {
                    "applicable": False,
                    "implementation_status": "not_applicable",
                    "justification": "No such systems in scope",
                    "owner": "Jane Roe, CISO",
                    "target_date": "2027-03-31",
                    "note": "agreed",
                },
            }
        ],
    }
    headers = {**reviewer, "Idempotency-Key": f"{run_id}:amend:1"}
    amended = api.client.post(url, headers=headers, json=body)
    assert amended.status_code == 201, amended.text
    receipt = amended.json()
    assert (receipt["version"], receipt["based_on"], receipt["duplicate"]) == (2, 1, False)
    again = api.client.post(url, headers=headers, json=body)
    assert (again.status_code, again.json()["artifact_id"], again.json()["duplicate"]) == (
        201,
        receipt["artifact_id"],
        True,
    )

    run = api.follow(owner, run_id, lambda r: r["context"]["artifacts"].get("soa") == 2)
    versions = _soa_versions(api, owner, run_id)
    assert set(versions) == {1, 2} and versions[1]["status"] == "superseded"
    second = api.client.get(
        f"/api/v1/workflows/{run_id}/artifacts/{receipt['artifact_id']}", headers=owner
    ).json()["content"]
    changed = next(r for r in second["requirements"] if r["requirement_id"] == row)
    assert (
        changed["applicable"],
        changed["implementation_status"],
        changed["justification"],
        changed["owner"],
        changed["amended"],
    ) == (False, "not_applicable", "No such systems in scope", "Jane Roe, CISO", True)
    untouched = [r for r in second["requirements"] if r["requirement_id"] != row]
    assert all(r["implementation_status"] is None for r in untouched)
    record = second["amendments"][-1]
    assert (record["by"], record["reason"], record["based_on"]) == (
        "user:reviewer@acme",
        "no cardholder data on site",
        1,
    )
    assert record["rows"][0]["row"] == row and record["at"]
    assert record["rows"][0]["before"]["applicable"] is True
    assert record["rows"][0]["before"]["implementation_status"] is None

    # An approval of the superseded version does not count; the amended one opens the gate.
    stale = api.client.post(
        f"/api/v1/workflows/{run_id}/approvals",
        headers=reviewer,
        json={"artifact_kind": "soa", "artifact_version": 1},
    )
    assert stale.status_code == 201
    sent = api.client.post(
        f"/api/v1/workflows/{run_id}/signals",
        params={"wait": 10},
        headers={**reviewer, "Idempotency-Key": f"{run_id}:stale"},
        json={"type": "soa_approved", "approval_event_id": stale.json()["id"]},
    )
    assert sent.status_code == 422 and "version 2 awaits approval" in sent.text
    other = api.key(
        "approve", "read", tenant="tenant-amend", principal="user:other@acme", roles=("assessor",)
    )
    assert approve_current(api, other, run)["fate"] == "applied"
    approvals = api.client.get(f"/api/v1/workflows/{run_id}/approvals", headers=owner).json()
    accepted = [
        a for a in approvals if a["artifact_kind"] == "soa" and a.get("consumed_by_signal_id")
    ]
    assert [a["artifact_version"] for a in accepted] == [2]
