"""A whole SOC 2 assessment over HTTP as a GRC team runs it: categories chosen with the
framework, gates that refuse drafts nobody decided (naming how many and which), statuses
and owners set in bulk, an owner and date from the gap analysis in the POA&M, and a report
whose sign-off names an unapproved input in red and whose gate refuses until it is
approved; the assessor's statement set on the report by amendment."""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any

from tests.api.conftest import Api, Headers, waiting_at
from tests.support.http_lifecycle import approve, approve_current, confirm_proposals, undecided

TENANT = "tenant-gates"


def _content(api: Api, headers: Headers, run_id: str, artifact_id: str) -> dict[str, Any]:
    response = api.client.get(
        f"/api/v1/workflows/{run_id}/artifacts/{artifact_id}", headers=headers
    )
    assert response.status_code == 200, response.text
    return dict(response.json()["content"])


def _refused(api: Api, reviewer: Headers, run: dict[str, Any], kind: str) -> dict[str, Any]:
    version = run["context"]["artifacts"][kind]
    response = api.client.post(
        f"/api/v1/workflows/{run['id']}/approvals",
        headers=reviewer,
        json={"artifact_kind": kind, "artifact_version": version},
    )
    assert response.status_code == 409, response.text
    problem = dict(response.json())
    assert problem["code"] == "gate_not_ready"
    return problem


def _amend(
    api: Api, who: Headers, run_id: str, artifact_id: str, rows: list[dict[str, Any]], key: str
) -> dict[str, Any]:
    response = api.client.post(
        f"/api/v1/workflows/{run_id}/artifacts/{artifact_id}/amendments",
        headers={**who, "Idempotency-Key": key},
        json={"reason": "agreed in the review meeting", "rows": rows},
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_gates_refuse_undecided_drafts_and_the_report_an_unapproved_input(
    running_api: Api,
) -> None:
    api = running_api
    owner = api.key("signal", "read", tenant=TENANT, principal="user:owner@acme")
    reviewer = api.key(
        "approve", "read", tenant=TENANT, principal="user:reviewer@acme", roles=("assessor",)
    )
    decider = api.key("approve", "read", tenant=TENANT, principal="user:control-owner@acme")
    assessment = api.create_assessment(owner)
    api.upload_samples(owner, assessment["id"])
    run_id = api.start(owner, assessment["id"], "gates-1").json()["id"]
    api.follow(owner, run_id, waiting_at("wait_for_framework_selection", "waiting_for_input"))
    bad = api.client.post(
        f"/api/v1/workflows/{run_id}/signals",
        headers={**owner, "Idempotency-Key": f"{run_id}:bad-category"},
        json={
            "type": "framework_selected",
            "payload": {"framework": "SOC 2", "categories": ["Integrity"]},
        },
    )
    assert bad.status_code == 422 and "its categories: security (Security)" in bad.text
    chosen = api.client.post(
        f"/api/v1/workflows/{run_id}/signals",
        params={"wait": 10},
        headers={**owner, "Idempotency-Key": f"{run_id}:framework"},
        json={
            "type": "framework_selected",
            "payload": {"framework": "SOC 2", "categories": ["availability"]},
        },
    )
    assert chosen.json()["fate"] == "applied", chosen.text

    # --- SoA: categories, no headings, and a gate that asks for decisions ----------------
    run = api.follow(owner, run_id, waiting_at("wait_for_soa_approval"))
    gate = undecided(api, owner, run)
    soa = _content(api, owner, run_id, gate["artifact_id"])
    rows = {r["requirement_id"]: r for r in soa["requirements"]}
    assert "P1.0" not in rows and "P1.1" in rows  # a heading is never a row
    assert rows["P1.1"]["applicable"] is False and rows["P1.1"]["excluded_by"] == "category"
    assert rows["P1.1"]["justification"].startswith("Out of scope: the Privacy category")
    assert rows["A1.2"]["applicable"] and rows["CC6.1"]["applicable"]
    applicable = [r for r in rows.values() if r["applicable"]]
    assert all(r["title"] and r["proposed_implementation_status"] for r in applicable)
    assert all("SOC 2" in r["justification"] for r in applicable)
    assert gate["required"] and gate["undecided"] == len(applicable)
    problem = _refused(api, reviewer, run, "soa")
    assert f"{len(applicable)} of {len(rows)} applicable rows" in problem["detail"]
    assert problem["readiness"]["undecided_rows"][0] in rows

    run = confirm_proposals(api, decider, run, gate)
    decided = _content(api, owner, run_id, undecided(api, owner, run)["artifact_id"])
    assert undecided(api, owner, run)["ready"]
    assert all(
        r["implementation_status"] == r["proposed_implementation_status"]
        for r in decided["requirements"]
        if r["applicable"]
    )
    assert approve_current(api, reviewer, run)["fate"] == "applied"  # the scope stays unapproved

    # --- gaps: an owner and a date set on a finding reach the POA&M ------------------------
    run = api.follow(owner, run_id, waiting_at("wait_for_gap_approval"))
    gaps_gate = undecided(api, owner, run)
    assert not gaps_gate["required"]  # the gap gate does not ask for owners by default
    finding = _content(api, owner, run_id, gaps_gate["artifact_id"])["gaps"][0]["control_id"]
    changes = {"owner": "Jane Roe, Head of IT", "target_date": "2027-06-30"}
    _amend(
        api, decider, run_id, gaps_gate["artifact_id"], [{"row": finding, "changes": changes}], "g"
    )
    run = api.follow(owner, run_id, lambda r: r["context"]["artifacts"]["gap_analysis"] == 2)
    run = api.follow(owner, run_id, waiting_at("wait_for_gap_approval"))
    assert approve_current(api, reviewer, run)["fate"] == "applied"
    run = api.follow(owner, run_id, waiting_at("wait_for_maturity_approval"))
    assert approve_current(api, reviewer, run)["fate"] == "applied"

    run = api.follow(owner, run_id, waiting_at("wait_for_poam_approval"))
    poam_gate = undecided(api, owner, run)
    items = _content(api, owner, run_id, poam_gate["artifact_id"])["items"]
    carried = next(i for i in items if i["control_id"] == finding)
    assert (carried["point_of_contact"], carried["scheduled_completion_date"]) == (
        "Jane Roe, Head of IT",
        "2027-06-30",
    )
    assert poam_gate["undecided"] == len(items) - 1
    assert "items without an owner" in _refused(api, reviewer, run, "poam")["detail"]
    run = confirm_proposals(api, decider, run, poam_gate)
    assert approve_current(api, reviewer, run)["fate"] == "applied"

    # --- report: the unapproved scope in red, the gate refusing, then drafted again --------
    run = api.follow(owner, run_id, waiting_at("wait_for_report_approval"))
    report_gate = undecided(api, owner, run)
    assert report_gate["unapproved_inputs"] == ["Scope v1"]
    html = api.client.get(f"/api/v1/workflows/{run_id}/report", headers=owner).text
    assert '<tr class="unapproved"><td>Scope v1</td>' in html and "NOT APPROVED" in html
    assert "Scope v1" in _refused(api, reviewer, run, "report")["detail"]
    assert approve(api, reviewer, run, "scope", 1)["fate"] == "applied"
    run = api.follow(
        owner,
        run_id,
        lambda r: (
            r["context"]["artifacts"]["report"] == 2 and r["status"] == "waiting_for_approval"
        ),
    )
    report_gate = undecided(api, owner, run)
    assert report_gate["ready"] and report_gate["unapproved_inputs"] == []

    statement = {
        "conclusion": "Controls in scope are documented; gaps are planned in the POA&M.",
        "scope_boundary": "Corporate IT and the hosted SaaS platform.",
        "period_start": "2026-01-01",
        "period_end": "2026-06-30",
    }
    backwards = {
        "row": "assessor",
        "changes": {"period_start": "2026-07-01", "period_end": "2026-06-30"},
    }
    refused = api.client.post(
        f"/api/v1/workflows/{run_id}/artifacts/{report_gate['artifact_id']}/amendments",
        headers=decider,
        json={"reason": "period", "rows": [backwards]},
    )
    assert refused.status_code == 422 and "ends" in refused.text
    _amend(
        api,
        decider,
        run_id,
        report_gate["artifact_id"],
        [{"row": "assessor", "changes": statement}],
        "r",
    )
    run = api.follow(
        owner,
        run_id,
        lambda r: (
            r["context"]["artifacts"]["report"] == 4 and r["status"] == "waiting_for_approval"
        ),
    )
    html = api.client.get(f"/api/v1/workflows/{run_id}/report", headers=owner).text
    assert escape(statement["conclusion"]) in html and "2026-01-01 to 2026-06-30" in html
    assert 'class="unapproved"' not in html
    results = api.client.get(
        f"/api/v1/workflows/{run_id}/report",
        params={"format": "oscal_assessment_results"},
        headers=owner,
    ).json()["assessment-results"]["results"][0]
    period = [datetime.fromisoformat(results[k].replace("Z", "+00:00")) for k in ("start", "end")]
    assert [p.isoformat() for p in period] == [
        "2026-01-01T00:00:00+00:00",
        "2026-06-30T23:59:59+00:00",
    ]
    assert statement["conclusion"] in results["description"]
    # Whoever wrote the statement asked for this draft: someone else approves it.
    assert approve_current(api, reviewer, run)["fate"] == "applied"
    done = api.follow(owner, run_id, lambda r: r["status"] == "completed")
    assert done["context"]["approved"]["report"] == 4
