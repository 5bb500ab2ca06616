"""Assessments, stored-response idempotency, body limits, paging and problem details."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from orchestrator.api import create_app
from orchestrator.db.models import Assessment
from orchestrator.db.session import transaction
from tests.api.conftest import Api


def _code(response: Any) -> tuple[int, str]:
    assert response.headers["content-type"] == "application/problem+json", response.text
    return response.status_code, response.json()["code"]


def _count_assessments() -> int:
    with transaction() as session:
        return int(session.scalar(select(func.count()).select_from(Assessment)) or 0)


def test_create_and_read_an_assessment(api: Api) -> None:
    headers = api.key("signal", "read", principal="user:ana@acme")
    created = api.client.post(
        "/api/v1/assessments",
        headers=headers,
        json={"organization_id": "acme-org", "name": " 2027 audit "},
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["name"], body["status"], body["tenant_id"]) == ("2027 audit", "draft", "acme")
    assert created.headers["location"] == f"/api/v1/assessments/{body['id']}"
    read = api.client.get(created.headers["location"], headers=headers)
    assert read.json() == body
    assert _code(api.client.get(f"/api/v1/assessments/{uuid.uuid4()}", headers=headers)) == (
        404,
        "not_found",
    )


def test_create_validates_its_body(api: Api) -> None:
    headers = api.key()
    for body in (
        {"organization_id": "o"},
        {"organization_id": "o", "name": ""},
        {"organization_id": "o", "name": "x" * 301},
        {"organization_id": "o", "name": "x", "tenant_id": "other"},
    ):
        response = api.client.post("/api/v1/assessments", headers=headers, json=body)
        assert _code(response) == (422, "validation_failed")
        assert response.json()["errors"], body
    broken = api.client.post(
        "/api/v1/assessments",
        headers={**headers, "Content-Type": "application/json"},
        content=b"{not json",
    )
    assert _code(broken) == (422, "validation_failed")
    assert _count_assessments() == 0


def test_idempotency_key_replays_the_first_response_and_refuses_other_requests(api: Api) -> None:
    headers = {**api.key(), "Idempotency-Key": "create-2027"}
    body = {"organization_id": "acme-org", "name": "2027"}
    first = api.client.post("/api/v1/assessments", headers=headers, json=body)
    again = api.client.post("/api/v1/assessments", headers=headers, json=body)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json() and again.headers["location"] == first.headers["location"]
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    other = api.client.post("/api/v1/assessments", headers=headers, json={**body, "name": "2028"})
    assert _code(other) == (409, "idempotency_conflict")
    assert _count_assessments() == 1
    # Keys are per tenant: another tenant may use the same one.
    elsewhere = api.client.post(
        "/api/v1/assessments",
        json=body,
        headers={**api.key(tenant="globex"), "Idempotency-Key": "create-2027"},
    )
    assert elsewhere.status_code == 201 and elsewhere.json()["id"] != first.json()["id"]


def test_a_failed_request_does_not_use_up_its_idempotency_key(api: Api) -> None:
    headers = {**api.key("signal", organizations=["acme-org"]), "Idempotency-Key": "k"}
    refused = api.client.post(
        "/api/v1/assessments", headers=headers, json={"organization_id": "other-org", "name": "x"}
    )
    assert _code(refused) == (422, "invalid_input")
    accepted = api.client.post(
        "/api/v1/assessments", headers=headers, json={"organization_id": "acme-org", "name": "x"}
    )
    assert accepted.status_code == 201


def test_bodies_over_the_limit_are_refused(api: Api) -> None:
    headers = api.key()
    huge = {"organization_id": "acme-org", "name": "x", "pad": "y" * (1024 * 1024 + 1)}
    response = api.client.post("/api/v1/assessments", headers=headers, json=huge)
    assert _code(response) == (413, "payload_too_large")
    assert _count_assessments() == 0


def test_assessments_are_listed_newest_first_in_pages(api: Api) -> None:
    headers = api.key()
    created = [api.create_assessment(headers, name=f"a{i}")["id"] for i in range(5)]
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = api.client.get("/api/v1/assessments", headers=headers, params=params).json()
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == list(reversed(created))
    bad = api.client.get("/api/v1/assessments", headers=headers, params={"cursor": "zzz"})
    assert _code(bad) == (422, "invalid_cursor")
    too_big = api.client.get("/api/v1/assessments", headers=headers, params={"limit": 500})
    assert _code(too_big) == (422, "validation_failed")


def test_unexpected_errors_are_problems_without_internals(api: Api) -> None:
    app = create_app()

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("secret internals")

    response = TestClient(app, raise_server_exceptions=False).get("/boom")
    assert _code(response) == (500, "internal_error")
    assert "secret" not in response.text


def test_health_answers_without_a_key(api: Api) -> None:
    assert api.client.get("/healthz").json() == {"status": "ok"}
