"""Risk proposals over HTTP and the command line on PostgreSQL: listed with their reason,
each decided once (accept with the controls selected, merge into a risk held, reject with
a reason), the decision audited on the proposing run; the SoA gate's readiness counts rows
with no basis. The proposals are what the gap analysis stores for its findings
(workers.analysis.risk_proposal), here for findings on ISO/IEC 27001:2022 requirements
and the SCF controls the catalogue links to them."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.cli.group import lifecycle
from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.service.risk_proposals import store_proposals
from tests.api.conftest import Api, Headers
from workers.analysis.risk_proposal import propose_risk

pytestmark = pytest.mark.integration

FRAMEWORK = "ISO/IEC 27001:2022"


def _gap(requirement: str, controls: list[str], state: str, weighting: int) -> dict[str, Any]:
    """A gap finding as the gap analysis completes it (the fields a proposal reads)."""
    label = f"{FRAMEWORK} {requirement}"
    return {
        "control_id": label,
        "framework": FRAMEWORK,
        "requirement_id": requirement,
        "title": f"Requirement {requirement}",
        "scf_controls": controls,
        "weighting": weighting,
        "evidence_state": state,
        "severity": "high",
        "severity_basis": {"importance": weighting},
        "condition": f"No document addresses {', '.join(controls)}.",
        "effect": "Information could be disclosed to people who should not see it.",
        "recommendation": "Write and approve the policy; assign its owner.",
        "documents": [],
    }


GAPS = [
    _gap("A.8.24", ["CRY-01", "CRY-05"], "no_evidence_found", 10),
    _gap("A.5.15", ["IAC-01"], "weak_evidence", 7),
    _gap("A.8.13", ["BCD-11"], "no_evidence_found", 9),
]


def _seed(api: Api, headers: Headers, tenant: str) -> tuple[str, str]:
    assessment = api.create_assessment(headers, organization=f"{tenant}-org")["id"]
    run = api.start(headers, assessment, f"{tenant}-run").json()["id"]
    with transaction() as session:
        found = session.get(WorkflowRun, uuid.UUID(run))
        assert found is not None
        gaps = [g | {"risk_proposal": propose_risk(g)} for g in GAPS]
        assert store_proposals(session, found, 1, gaps) == 3
        assert store_proposals(session, found, 2, gaps) == 0, "proposed once per finding"
    return assessment, run


def test_proposals_are_decided_once_over_http(pg_api: Api) -> None:
    api = pg_api
    writer = api.key("read", "signal", tenant="prop-t", principal="user:analyst@acme.example")
    reader = api.key("read", tenant="prop-t", principal="user:reader@acme.example")
    assessment, run = _seed(api, writer, "prop-t")
    url = f"/api/v1/assessments/{assessment}/risk-proposals"
    listed = api.client.get(url, headers=reader)
    assert listed.status_code == 200, listed.text
    proposals = {p["finding"]: p for p in listed.json()}
    assert set(proposals) == {g["control_id"] for g in GAPS}
    crypto = proposals[f"{FRAMEWORK} A.8.24"]
    assert crypto["status"] == "proposed" and crypto["gap_version"] == 2
    assert crypto["reason"]["missing"] == GAPS[0]["condition"]
    assert crypto["reason"]["requirement"] == f"{FRAMEWORK} A.8.24"
    assert (crypto["proposed"]["likelihood"], crypto["proposed"]["impact"]) == (4, 5)
    assert proposals[f"{FRAMEWORK} A.5.15"]["proposed"]["likelihood"] == 3

    base = f"/api/v1/risk-proposals/{crypto['proposal_id']}"
    body = {"owner": "user:it-lead@acme.example", "controls": ["CRY-05"]}
    assert api.client.post(f"{base}/accept", headers=reader, json=body).status_code == 403
    off = api.client.post(f"{base}/accept", headers=writer, json={**body, "controls": ["NOT-1"]})
    assert (off.status_code, off.json()["code"]) == (422, "unknown_catalogue_id")
    accepted = api.client.post(f"{base}/accept", headers=writer, json=body)
    assert accepted.status_code == 200, accepted.text
    risk_id = accepted.json()["risk_id"]
    assert accepted.json()["status"] == "accepted"
    risk = api.client.get(f"/api/v1/risks/{risk_id}", headers=reader).json()
    assert risk["controls"] == ["CRY-05"] and risk["owner"] == "user:it-lead@acme.example"
    assert risk["requirements"] == [{"framework": FRAMEWORK, "requirement_id": "A.8.24"}]
    again = api.client.post(f"{base}/reject", headers=writer, json={"reason": "no"})
    assert again.status_code == 409, again.text
    assert again.json()["code"] == "risk_proposal_decided"
    assert again.headers["content-type"] == "application/problem+json"

    access = proposals[f"{FRAMEWORK} A.5.15"]["proposal_id"]
    merged = api.client.post(
        f"/api/v1/risk-proposals/{access}/merge", headers=writer, json={"risk_id": risk_id}
    )
    assert (merged.status_code, merged.json()["risk_id"]) == (200, risk_id), merged.text
    backup = proposals[f"{FRAMEWORK} A.8.13"]["proposal_id"]
    rejected = api.client.post(
        f"/api/v1/risk-proposals/{backup}/reject",
        headers=writer,
        json={"reason": "Backups are the hosting provider's, under its contract"},
    )
    assert rejected.json()["status"] == "rejected", rejected.text
    decided = api.client.get(url, headers=reader, params={"status": "proposed"}).json()
    assert decided == []

    audit = api.client.get(f"/api/v1/workflows/{run}/audit", headers=reader).json()["items"]
    events = [
        (e["event_type"], e["metadata"].get("finding"))
        for e in audit
        if e["event_type"].startswith("lifecycle_workflow_risk_")
    ]
    assert events == [
        ("lifecycle_workflow_risk_recorded", None),
        ("lifecycle_workflow_risk_proposal_accepted", f"{FRAMEWORK} A.8.24"),
        ("lifecycle_workflow_risk_proposal_merged", f"{FRAMEWORK} A.5.15"),
        ("lifecycle_workflow_risk_proposal_rejected", f"{FRAMEWORK} A.8.13"),
    ]
    stranger = api.key("read", "signal", tenant="prop-other", principal="user:x@other")
    assert api.client.get(base, headers=stranger).status_code == 404


def _run(*args: str) -> tuple[int, str]:
    outcome = CliRunner().invoke(lifecycle, list(args))
    return outcome.exit_code, outcome.output


def test_proposals_from_the_command_line(pg_api: Api) -> None:
    headers = pg_api.key("read", "signal", tenant="prop-cli")
    assessment, _ = _seed(pg_api, headers, "prop-cli")
    code, out = _run("risks", "proposals", "list", assessment, "--json")
    assert code == 0, out
    listed = {p["finding"]: p["proposal_id"] for p in json.loads(out)}
    first = listed[f"{FRAMEWORK} A.8.24"]
    code, out = _run("risks", "proposals", "show", first)
    assert code == 0 and "No document addresses CRY-01, CRY-05." in out, out
    code, out = _run(
        "risks", "proposals", "accept", first, "--owner", "user:ops@acme.example",
        "--control", "CRY-05", "--actor", "user:analyst", "--json",
    )  # fmt: skip
    assert code == 0, out
    made = json.loads(out)
    assert (made["status"], made["decided_by"]) == ("accepted", "user:analyst")
    code, out = _run(
        "risks", "proposals", "reject", listed[f"{FRAMEWORK} A.8.13"], "--reason", "supplier's"
    )
    assert code == 0 and "rejected" in out, out
    code, out = _run("risks", "proposals", "reject", first, "--reason", "again")
    assert code != 0 and "risk_proposal_decided" in out, out
    code, out = _run("risks", "proposals", "list", assessment, "--status", "proposed")
    assert code == 0 and "A.5.15" in out and "A.8.24" not in out, out
