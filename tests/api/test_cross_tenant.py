"""Two tenants, every endpoint, each other's ids: always 404, and nothing changes.

The routes are read from the app's OpenAPI schema, so an endpoint added later without an entry
here fails this test instead of escaping it.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import func, select

from orchestrator.api import app
from orchestrator.contracts.identity import Actor
from orchestrator.db.apikey_models import IdempotentResponse
from orchestrator.db.judgement_models import DocumentJudgementAmendment
from orchestrator.db.models import ApprovalEvent, Assessment, Document, InboxSignal, WorkflowRun
from orchestrator.db.risk_models import Risk, RiskProposal, RiskVersion
from orchestrator.db.roster_models import RosterEvent, RosterPerson
from orchestrator.db.session import transaction
from tests.api.conftest import Api, Headers
from tests.support.http_lifecycle import approve_current, approve_scope, select_framework
from tests.support.outside_effects import failed_export_handoff
from tests.support.polling import poll

#: A risk of the register, as its creation and revision take it.
RISK: dict[str, Any] = {
    "title": "Stolen laptop exposes customer data",
    "asset": "Staff laptops",
    "threat": "Theft",
    "vulnerability": "Disks are not encrypted",
    "likelihood": 3,
    "impact": 4,
    "owner": "user:it-lead@example.org",
    "treatment": "modify",
    "treatment_plan": "Encrypt every disk",
    "controls": ["CRY-05"],
}

#: A valid body for every POST, so validation passes and only tenancy can refuse.
BODIES: dict[str, dict[str, Any] | None] = {
    "/api/v1/assessments/{assessmentId}/workflows/lifecycle/start": {},
    "/api/v1/workflows/{workflowRunId}/cancel": {"reason": "x"},
    "/api/v1/workflows/{workflowRunId}/resume": {"reason": "x"},
    "/api/v1/workflows/{workflowRunId}/block": {"reason": "x"},
    "/api/v1/workflows/{workflowRunId}/retry": {"reason": "x"},
    "/api/v1/workflows/{workflowRunId}/signals": {
        "type": "framework_selected",
        "payload": {"framework": "SCF"},
    },
    "/api/v1/workflows/{workflowRunId}/approvals": {"artifact_kind": "soa", "artifact_version": 1},
    "/api/v1/workflows/{workflowRunId}/steps/{step}/reprocess": {
        "reason": "x",
        "new_version": True,
    },
    "/api/v1/workflows/{workflowRunId}/new-version": {"artifact_kind": "soa", "reason": "x"},
    "/api/v1/workflows/{workflowRunId}/artifacts/{artifactId}/amendments": {
        "reason": "x",
        "rows": [{"row": "GOV-01", "changes": {"note": "x"}}],
    },
    "/api/v1/assessments/{assessmentId}/documents": None,  # multipart, below
    "/api/v1/assessments/{assessmentId}/documents/{documentId}/judgement": {
        "kind": "record",
        "reason": "x",
    },
    "/api/v1/workflows/{workflowRunId}/migrate": {"to_version": 1, "reason": "x"},
    "/api/v1/workflows/{workflowRunId}/adopt": {"reason": "x"},
    "/api/v1/handoffs/{handoffId}/claim": {},
    "/api/v1/workflows/{workflowRunId}/reviews/{artifactKind}/claim": {},
    "/api/v1/workflows/{workflowRunId}/reviews/{artifactKind}/claim/take-over": {},
    "/api/v1/workflows/{workflowRunId}/reviews/{artifactKind}/comments": {
        "version": 1,
        "body": "x",
    },
    "/api/v1/handoffs/{handoffId}/resolve": {"action": "cancel", "comment": "x"},
    "/api/v1/assessments/{assessmentId}/catalogue-adoptions": {"target": "2022.3", "reason": "x"},
    "/api/v1/assessments/{assessmentId}/evidence-requests": {
        "requirements": ["CC6.1"],
        "recipient": "it-ops@vendor.example",
        "instructions": "x",
        "due_on": "2031-01-01",
    },
    "/api/v1/assessments/{assessmentId}/documents/{documentId}/versions": None,  # multipart
    "/api/v1/evidence-requests/{requestId}/revoke": {},
    "/api/v1/reassessments/{reassessmentId}/row-approvals": {"row": "x", "row_sha256": "0" * 64},
    "/api/v1/reassessments/{reassessmentId}/retry": {},
    "/api/v1/assessments/{assessmentId}/roster": {
        "name": "Dana Whitfield",
        "email": "dana@example.org",
        "roles": ["control_owner"],
    },
    "/api/v1/assessments/{assessmentId}/risks": RISK,
    "/api/v1/risks/{riskId}/accept": {"assessment_id": str(uuid.uuid4()), "note": "x"},
    "/api/v1/risk-proposals/{proposalId}/accept": {"owner": "user:it-lead@example.org"},
    "/api/v1/risk-proposals/{proposalId}/merge": {"risk_id": str(uuid.uuid4())},
    "/api/v1/risk-proposals/{proposalId}/reject": {"reason": "x"},
}

#: A valid body for every PUT.
PUTS: dict[str, dict[str, Any]] = {
    "/api/v1/risks/{riskId}": {**RISK, "assessment_id": str(uuid.uuid4())},
    "/api/v1/assessments/{assessmentId}/documents/{documentId}/life": {
        "owner": "user:x@example.org",
        "effective_on": "2030-01-01",
        "review_every_days": 365,
    },
    "/api/v1/assessments/{assessmentId}/roster/{personId}": {
        "name": "Dana Whitfield",
        "email": "dana@example.org",
        "roles": ["control_owner", "approver"],
    },
}

#: Required query parameters of GETs, for the same reason.
QUERIES: dict[str, dict[str, str]] = {
    "/api/v1/assessments/{assessmentId}/kb/search": {"q": "access review"},
    "/api/v1/assessments/{assessmentId}/catalogue-diff": {"to": "2022.3"},
}

PROBLEM_FIELDS = {"type", "title", "status", "detail", "instance", "code"}

#: Reference data every tenant shares (control catalogues): their ids are no tenant's.
SHARED_PREFIXES = ("/api/v1/frameworks/",)


@dataclass
class Tenant:
    name: str
    owner: Headers
    admin: Headers
    ids: dict[str, str]


def _prepare(api: Api, name: str) -> tuple[Tenant, Headers]:
    owner = api.key("signal", "read", tenant=name, principal=f"user:owner@{name}")
    reviewer = api.key(
        "approve", tenant=name, principal=f"user:reviewer@{name}", roles=("assessor",)
    )
    assessment = api.create_assessment(owner, organization=f"{name}-org")
    api.upload_samples(owner, assessment["id"])
    # The probe is about tenancy: no gate asks for rows decided before an approval.
    policies = {kind: {"require_decided": False} for kind in ("soa", "poam")}
    run_id = api.start(owner, assessment["id"], "start", {"approval_policies": policies}).json()[
        "id"
    ]
    ids = {
        "assessmentId": assessment["id"],
        "workflowRunId": run_id,
        "step": "create_soa_draft",
        "artifactKind": "soa",
    }
    return Tenant(name, owner, api.key("admin", tenant=name), ids), reviewer


def _drive_all(api: Api, tenants: list[tuple[Tenant, Headers]]) -> None:
    """Answer both runs' waits, interleaved, until both are completed."""
    done: set[str] = set()

    def answer_waits() -> set[str]:
        for tenant, reviewer in tenants:
            run = api.run(tenant.owner, tenant.ids["workflowRunId"])
            if run["status"] == "completed":
                done.add(tenant.name)
            elif run["current_step"] == "wait_for_framework_selection":
                select_framework(api, tenant.owner, run["id"])
            elif run["status"] == "waiting_for_approval":
                if run["current_step"] == "wait_for_soa_approval":
                    approve_scope(api, reviewer, run)  # the report names it otherwise
                approve_current(api, reviewer, run)
            else:
                assert run["status"] in ("pending", "running", "waiting_for_input"), run
        return done

    poll(
        answer_waits,
        lambda finished: len(finished) == len(tenants),
        timeout_s=300,  # two whole lifecycles, reports rendered: minutes on a loaded machine
        what="both runs to complete",
        interval_s=0.02,
    )


@pytest.fixture
def tenants(running_api: Api) -> tuple[Tenant, Tenant]:
    api = running_api
    prepared = [_prepare(api, "acme"), _prepare(api, "globex")]
    _drive_all(api, prepared)
    for tenant, _ in prepared:
        run = tenant.ids["workflowRunId"]
        signals = api.client.get(f"/api/v1/workflows/{run}/signals", headers=tenant.owner)
        tenant.ids["signalId"] = signals.json()["items"][-1]["signal_id"]
        artifacts = api.client.get(f"/api/v1/workflows/{run}/artifacts", headers=tenant.owner)
        tenant.ids["artifactId"] = artifacts.json()[0]["id"]
        assessment = tenant.ids["assessmentId"]
        documents = api.client.get(
            f"/api/v1/assessments/{assessment}/documents", headers=tenant.owner
        )
        tenant.ids["documentId"] = documents.json()[0]["id"]
        owner = Actor(tenant.name, f"user:owner@{tenant.name}")
        tenant.ids["handoffId"] = str(failed_export_handoff(owner, uuid.UUID(run)))
        tenant.ids.update(_continuous_ids(api, tenant))
    return prepared[0][0], prepared[1][0]


def _continuous_ids(api: Api, tenant: Tenant) -> dict[str, str]:
    """An evidence request and a reassessment (a new version of a cited document)."""
    base = f"/api/v1/assessments/{tenant.ids['assessmentId']}"
    request = api.client.post(
        f"{base}/evidence-requests",
        headers=tenant.owner,
        json=BODIES["/api/v1/assessments/{assessmentId}/evidence-requests"],
    )
    assert request.status_code == 201, request.text
    version = api.client.post(
        f"{base}/documents/{tenant.ids['documentId']}/versions",
        headers=tenant.owner,
        files={"file": ("policy.md", b"# Access control\n\nReviewed yearly.\n", "text/markdown")},
    )
    assert version.status_code == 201, version.text
    reassessments = api.client.get(f"{base}/reassessments", headers=tenant.owner)
    assert reassessments.status_code == 200 and reassessments.json(), reassessments.text
    person = api.client.post(
        f"{base}/roster",
        headers=tenant.owner,
        json={**(BODIES["/api/v1/assessments/{assessmentId}/roster"] or {}), "email": "a@x.org"},
    )
    assert person.status_code == 201, person.text
    risk = api.client.post(f"{base}/risks", headers=tenant.owner, json=RISK)
    assert risk.status_code == 201, risk.text
    proposals = api.client.get(f"{base}/risk-proposals", headers=tenant.owner)
    assert proposals.status_code == 200 and proposals.json(), proposals.text
    return {
        "proposalId": proposals.json()[0]["proposal_id"],
        "riskId": risk.json()["risk_id"],
        "personId": person.json()["id"],
        "requestId": request.json()["request"]["id"],
        "reassessmentId": reassessments.json()[0]["id"],
    }


def _routes_with_ids() -> list[tuple[str, str]]:
    paths = app.openapi()["paths"]
    # Tenant data lives under /api/v1 (/problems/{code} documents the API, for everyone).
    routes = [
        (method.upper(), path)
        for path, operations in paths.items()
        if "{" in path and path.startswith("/api/v1/") and not path.startswith(SHARED_PREFIXES)
        for method in sorted(operations)
    ]
    posts = {path for method, path in routes if method == "POST"}
    assert posts == set(BODIES), "every POST with an id needs a body in BODIES"
    puts = {path for method, path in routes if method == "PUT"}
    assert puts == set(PUTS), "every PUT with an id needs a body in PUTS"
    return routes


def _call(api: Api, method: str, template: str, ids: dict[str, str], headers: Headers) -> Any:
    url = re.sub(r"\{(\w+)\}", lambda m: ids[m.group(1)], template)
    if method == "GET":
        return api.client.get(url, headers=headers, params=QUERIES.get(template))
    if method == "PUT":
        return api.client.put(url, headers=headers, json=PUTS[template])
    if method == "DELETE":
        return api.client.delete(url, headers=headers)
    if template.endswith(("/documents", "/versions")):
        return api.client.post(
            url, headers=headers, files={"file": ("x.md", b"# Cross-tenant\n", "text/markdown")}
        )
    return api.client.post(url, headers=headers, json=BODIES[template])


def _fingerprint() -> tuple[int, ...]:
    with transaction() as session:
        versions = tuple(session.scalars(select(WorkflowRun.version).order_by(WorkflowRun.id)))
        counts = tuple(
            int(session.scalar(select(func.count()).select_from(model)) or 0)
            for model in (
                Assessment,
                Document,
                InboxSignal,
                ApprovalEvent,
                IdempotentResponse,
                DocumentJudgementAmendment,
                RosterPerson,
                RosterEvent,
                Risk,
                RiskVersion,
                RiskProposal,
            )
        )
    return versions + counts


def test_every_endpoint_answers_404_for_another_tenants_ids(
    running_api: Api, tenants: tuple[Tenant, Tenant]
) -> None:
    """...and the tenants' listings never show the other's records."""
    api = running_api
    routes = _routes_with_ids()
    acme, globex = tenants
    for method, template in routes:
        if method == "GET":  # the control: the owner reads the same URL
            for tenant in tenants:
                own = _call(api, method, template, tenant.ids, tenant.owner)
                assert own.status_code == 200, (template, own.text)
    before = _fingerprint()
    refused = []
    for method, template in routes:
        for owner, intruder in ((acme, globex), (globex, acme)):
            response = _call(api, method, template, owner.ids, intruder.admin)
            assert response.status_code == 404, (method, template, response.text)
            assert response.json()["code"] == "not_found"
            assert set(response.json()) == PROBLEM_FIELDS, "nothing but the problem"
            refused.append((method, template))
    assert _fingerprint() == before, "a refused request changed something"
    assert len(refused) == 2 * len(routes) and len(routes) >= 20
    _listings_never_show_another_tenants_records(api, acme, globex)


def _listings_never_show_another_tenants_records(api: Api, acme: Tenant, globex: Tenant) -> None:
    for tenant, other in ((acme, globex), (globex, acme)):
        runs = api.client.get("/api/v1/workflows", headers=tenant.admin).json()["items"]
        assert [r["id"] for r in runs] == [tenant.ids["workflowRunId"]]
        assessments = api.client.get("/api/v1/assessments", headers=tenant.admin).json()
        assert [a["id"] for a in assessments["items"]] == [tenant.ids["assessmentId"]]
        filtered = api.client.get(
            "/api/v1/workflows",
            headers=tenant.admin,
            params={"assessmentId": other.ids["assessmentId"]},
        )
        assert filtered.json()["items"] == []
