"""The API on PostgreSQL: keys, keyset paging over timestamps and UUIDs, idempotency races.

Skips without LIFECYCLE_TEST_DATABASE_URL (fails under CI=true), like the integration tier.
"""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from orchestrator.api import app
from orchestrator.db.models import Assessment
from orchestrator.db.session import transaction
from tests.api.conftest import Api
from tests.api.nul_text import (
    assert_lone_surrogate_refused_everywhere,
    assert_nul_refused_everywhere,
)

pytestmark = pytest.mark.integration


def _assessments(tenant: str) -> int:
    with transaction() as session:
        return int(
            session.scalar(
                select(func.count()).select_from(Assessment).where(Assessment.tenant_id == tenant)
            )
            or 0
        )


def test_runs_page_by_time_and_id_and_stay_in_their_tenant(pg_api: Api) -> None:
    api = pg_api
    mine, theirs = api.key(tenant="pg-paging"), api.key(tenant="pg-other")
    started = []
    for index in range(5):
        assessment = api.create_assessment(mine, name=f"a{index}")
        started.append(api.start(mine, assessment["id"], f"pg-{index}").json()["id"])
    seen, cursor = [], None
    while True:
        params: dict[str, str | int] = {"limit": 2, "status": "pending"}
        if cursor:
            params["cursor"] = cursor
        page = api.client.get("/api/v1/workflows", headers=mine, params=params).json()
        seen += [run["id"] for run in page["items"]]
        if (cursor := page["next_cursor"]) is None:
            break
    assert seen == list(reversed(started))
    assert api.client.get(f"/api/v1/workflows/{started[0]}", headers=theirs).status_code == 404
    assert api.client.get("/api/v1/workflows", headers=theirs).json()["items"] == []


def test_two_identical_requests_at_once_create_one_assessment(pg_api: Api) -> None:
    api = pg_api
    headers = {**api.key(tenant="pg-race"), "Idempotency-Key": "race-1"}
    barrier = threading.Barrier(4)
    answers: list[tuple[int, str | None]] = []

    def post() -> None:
        client = TestClient(app)
        barrier.wait()
        response = client.post(
            "/api/v1/assessments", headers=headers, json={"organization_id": "org", "name": "raced"}
        )
        answers.append(
            (response.status_code, response.json().get("id") or response.json().get("code"))
        )

    threads = [threading.Thread(target=post) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(answers) == 4
    created = {answer for status, answer in answers if status == 201}
    assert len(created) == 1, answers
    assert {answer for status, answer in answers if status != 201} <= {"idempotency_in_progress"}
    assert _assessments("pg-race") == 1


def test_nul_in_any_text_field_is_a_422_naming_it_and_stores_nothing(pg_api: Api) -> None:
    assert_nul_refused_everywhere(pg_api)


def test_a_lone_surrogate_in_any_text_field_is_a_422_and_stores_nothing(pg_api: Api) -> None:
    assert_lone_surrogate_refused_everywhere(pg_api)
