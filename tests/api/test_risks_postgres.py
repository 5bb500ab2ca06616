"""The risk register over HTTP on PostgreSQL: an organisation's risks carried across its
assessments, each change a version in the history and the audit trail, acceptance refused
to the risk's owner, SCF and requirement ids checked against the catalogue, CSV and XLSX."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from openpyxl import load_workbook
from sqlalchemy import func, select

from orchestrator.contracts.risk_method import METHOD_NAME
from orchestrator.db.risk_models import Risk, RiskVersion
from orchestrator.db.session import transaction
from tests.api.conftest import Api, Headers

pytestmark = pytest.mark.integration

OWNER = "user:it-lead@acme.example"
RISK: dict[str, Any] = {
    "title": "Stolen laptop exposes customer data",
    "asset": "Staff laptops holding customer exports",
    "threat": "Theft while travelling",
    "vulnerability": "Disks are not encrypted",
    "likelihood": 3,
    "impact": 4,
    "owner": OWNER,
    "treatment": "modify",
    "treatment_plan": "Enforce full-disk encryption through the MDM",
    "controls": ["CRY-05"],
    "requirements": [{"framework": "ISO/IEC 27001:2022", "requirement_id": "A.8.1"}],
    "residual": {"likelihood": 1, "impact": 4},
}


def _counts() -> tuple[int, int]:
    with transaction() as session:
        risks = session.scalar(select(func.count()).select_from(Risk))
        versions = session.scalar(select(func.count()).select_from(RiskVersion))
        return int(risks or 0), int(versions or 0)


def _register(api: Api, headers: Headers, assessment: str) -> dict[str, Any]:
    answer = api.client.get(f"/api/v1/assessments/{assessment}/risks", headers=headers)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_a_risk_is_versioned_accepted_by_another_and_carried_across(pg_api: Api) -> None:
    api = pg_api
    writer = api.key("read", "signal", tenant="risk-t", principal="user:analyst@acme.example")
    owner = api.key("read", "approve", tenant="risk-t", principal=OWNER)
    ciso = api.key("read", "approve", tenant="risk-t", principal="user:ciso@acme.example")
    first = api.create_assessment(writer, organization="acme")["id"]
    later = api.create_assessment(writer, organization="acme", name="2028 assessment")["id"]
    elsewhere = api.create_assessment(writer, organization="other-org")["id"]
    run = api.start(writer, first, "risk-run").json()["id"]

    keyed = {**writer, "Idempotency-Key": "risk-laptops"}
    made = api.client.post(f"/api/v1/assessments/{first}/risks", headers=keyed, json=RISK)
    assert made.status_code == 201, made.text
    risk = made.json()
    assert made.headers["location"] == f"/api/v1/risks/{risk['risk_id']}"
    replayed = api.client.post(f"/api/v1/assessments/{first}/risks", headers=keyed, json=RISK)
    assert replayed.headers["idempotent-replayed"] == "true"
    assert replayed.json()["risk_id"] == risk["risk_id"]
    assert (risk["version"], risk["change"], risk["score"], risk["level"]) == (
        1,
        "created",
        12,
        "medium",
    )
    assert (risk["residual_score"], risk["residual_level"]) == (4, "low")
    assert risk["actor_id"] == "user:analyst@acme.example"

    # The register is the organisation's: another of its assessments reads it, another
    # organisation's does not; the method is stated with it.
    register = _register(api, writer, later)
    assert [r["risk_id"] for r in register["risks"]] == [risk["risk_id"]]
    assert register["method"]["name"] == METHOD_NAME
    assert register["method"]["levels"]["high"] == ">= 15"
    assert _register(api, writer, elsewhere)["risks"] == []

    revised = api.client.put(
        f"/api/v1/risks/{risk['risk_id']}",
        headers=writer,
        json={**RISK, "likelihood": 4, "assessment_id": later, "expected_version": 1},
    )
    assert revised.status_code == 200, revised.text
    assert (revised.json()["version"], revised.json()["level"]) == (2, "high")
    stale = api.client.put(
        f"/api/v1/risks/{risk['risk_id']}",
        headers=writer,
        json={**RISK, "assessment_id": later, "expected_version": 1},
    )
    assert (stale.status_code, stale.json()["code"]) == (409, "concurrent_update")

    accept = f"/api/v1/risks/{risk['risk_id']}/accept"
    body = {"assessment_id": later, "note": "Residual risk within appetite"}
    before = _counts()
    refused = api.client.post(accept, headers=owner, json=body)
    assert refused.status_code == 422, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["code"] == "separation_of_duties"
    assert _counts() == before, "nothing is recorded"
    assert api.client.post(accept, headers=writer, json=body).status_code == 403  # no approve

    accepted = api.client.post(accept, headers=ciso, json={**body, "expected_version": 2})
    assert accepted.status_code == 200, accepted.text
    done = accepted.json()
    assert (done["version"], done["change"], done["accepted_by"]) == (
        3,
        "accepted",
        "user:ciso@acme.example",
    )
    assert done["accepted_at"] and done["acceptance_note"] == body["note"]
    assert done["likelihood"] == 4, "the accepted content is the revised one"

    # A change after acceptance is a new risk to accept: the acceptance does not carry.
    again = api.client.put(
        f"/api/v1/risks/{risk['risk_id']}", headers=writer, json={**RISK, "assessment_id": first}
    )
    assert again.json()["version"] == 4 and again.json()["accepted_by"] is None

    history = api.client.get(f"/api/v1/risks/{risk['risk_id']}/versions", headers=writer).json()
    assert [(v["version"], v["change"], v["actor_id"]) for v in history] == [
        (1, "created", "user:analyst@acme.example"),
        (2, "updated", "user:analyst@acme.example"),
        (3, "accepted", "user:ciso@acme.example"),
        (4, "updated", "user:analyst@acme.example"),
    ]
    assert [v["likelihood"] for v in history] == [3, 4, 4, 3]
    current = api.client.get(f"/api/v1/risks/{risk['risk_id']}", headers=writer).json()
    assert current["version"] == 4

    # Changes made through the first assessment are in its run's audit trail.
    audit = api.client.get(f"/api/v1/workflows/{run}/audit", headers=writer).json()["items"]
    risk_events = [
        (e["event_type"], e["metadata"]["version"], e["actor_id"])
        for e in audit
        if e["event_type"].startswith("lifecycle_workflow_risk_")
    ]
    assert risk_events == [
        ("lifecycle_workflow_risk_recorded", 1, "user:analyst@acme.example"),
        ("lifecycle_workflow_risk_revised", 4, "user:analyst@acme.example"),
    ]

    # Another tenant sees none of it.
    stranger = api.key("read", "approve", tenant="risk-other", principal="user:x@other")
    assert api.client.get(f"/api/v1/risks/{risk['risk_id']}", headers=stranger).status_code == 404
    assert api.client.post(accept, headers=stranger, json=body).status_code == 404


ISO = "ISO/IEC 27001:2022"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"controls": ["CRY-05", "NOT-99"]}, "NOT-99"),
        ({"requirements": [{"framework": "ISO/IEC 27001:2022", "requirement_id": "Z.9"}]}, "Z.9"),
        ({"requirements": [{"framework": "No such framework", "requirement_id": "1"}]}, "No such"),
        # 9.3.2 has sub-items; 9.3.9 is no requirement of the standard.
        ({"requirements": [{"framework": ISO, "requirement_id": "9.3.9"}]}, "9.3.9"),
    ],
)
def test_ids_off_the_catalogue_are_refused_and_nothing_stored(
    pg_api: Api, change: dict[str, Any], named: str
) -> None:
    api = pg_api
    headers = api.key("read", "signal", tenant="risk-ids")
    assessment = api.create_assessment(headers)["id"]
    before = _counts()
    answer = api.client.post(
        f"/api/v1/assessments/{assessment}/risks", headers=headers, json={**RISK, **change}
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == "unknown_catalogue_id" and named in answer.json()["detail"]
    assert _counts() == before
    for wrong in ({"impact": 6}, {"residual": {"likelihood": 2}}):
        off = api.client.post(
            f"/api/v1/assessments/{assessment}/risks", headers=headers, json={**RISK, **wrong}
        )
        assert off.json()["code"] == "validation_failed", off.text
    assert _counts() == before
    reader = api.key("read", tenant="risk-ids", principal="user:reader@acme")
    refused = api.client.post(f"/api/v1/assessments/{assessment}/risks", headers=reader, json=RISK)
    assert refused.status_code == 403


def test_a_requirement_the_catalogue_lists_by_its_sub_items_is_known(pg_api: Api) -> None:
    """Drafts assess ISO/IEC 27001's 9.3.2 once (the catalogue lists 9.3.2(a) to (g)), and
    its finding proposes a risk naming 9.3.2: accepting it as proposed must not be refused."""
    api = pg_api
    headers = api.key("read", "signal", tenant="risk-rolled")
    assessment = api.create_assessment(headers)["id"]
    rolled = {"framework": "ISO/IEC 27001:2022", "requirement_id": "9.3.2"}
    answer = api.client.post(
        f"/api/v1/assessments/{assessment}/risks",
        headers=headers,
        json={**RISK, "requirements": [rolled]},
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["requirements"] == [rolled]


def test_the_register_exports_as_csv_and_xlsx_with_its_method(pg_api: Api) -> None:
    api = pg_api
    headers = api.key("read", "signal", tenant="risk-export")
    assessment = api.create_assessment(headers)["id"]
    low = {**RISK, "title": "=cmd|calc", "threat": "bell\x07", "likelihood": 1, "impact": 2}
    for body in (low, RISK):
        made = api.client.post(
            f"/api/v1/assessments/{assessment}/risks", headers=headers, json=body
        )
        assert made.status_code == 201, made.text
    url = f"/api/v1/assessments/{assessment}/risks/export"

    answer = api.client.get(url, headers=headers)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
    assert 'filename="risk-register-acme-org.csv"' in answer.headers["content-disposition"]
    lines = list(csv.reader(io.StringIO(answer.content.decode("utf-8-sig"))))
    assert lines[0] == ["Risk register of organisation acme-org"]
    assert METHOD_NAME in lines[1][0] and "high >= 15" in lines[1][0]
    header, *rows = lines[2:]
    assert header[:3] == ["Risk ID", "Version", "Risk"]
    column = {name: index for index, name in enumerate(header)}
    # Highest score first; a formula-like title is quoted, never run.
    assert [r[column["Score (L x I)"]] for r in rows] == ["12", "2"]
    assert [r[column["Risk"]] for r in rows] == [RISK["title"], "'=cmd|calc"]
    assert rows[0][column["SCF controls"]] == "CRY-05"
    assert rows[0][column["Framework requirements"]] == "ISO/IEC 27001:2022 A.8.1"
    assert rows[0][column["Risk owner"]] == OWNER
    assert rows[1][column["Threat"]] == "bell\x07"

    xlsx = api.client.get(url, headers=headers, params={"format": "xlsx"})
    assert xlsx.status_code == 200, xlsx.text
    book = load_workbook(io.BytesIO(xlsx.content), read_only=True)
    assert book.sheetnames == ["Risk register", "Method"]
    sheet = [list(r) for r in book["Risk register"].iter_rows(values_only=True)]
    assert METHOD_NAME in str(sheet[1][0])
    assert sheet[2][:3] == ["Risk ID", "Version", "Risk"]
    assert [r[2] for r in sheet[3:]] == [RISK["title"], "'=cmd|calc"]
    # A control character XML cannot hold is escaped as OOXML writes it, not dropped.
    assert sheet[4][header.index("Threat")] == "bell_x0007_"
    method = {r[0]: r[1] for r in book["Method"].iter_rows(values_only=True)}
    assert method["level high"] == "score >= 15" and method["likelihood 5"].startswith("almost")
    foreign = api.create_assessment(headers, organization="Åcme 組織")["id"]
    named = api.client.get(f"/api/v1/assessments/{foreign}/risks/export", headers=headers)
    assert named.status_code == 200, named.text
    assert 'filename="risk-register-_cme___.csv"' in named.headers["content-disposition"]
    bad = api.client.get(url, headers=headers, params={"format": "pdf"})
    assert bad.status_code == 422
