"""Idempotency-Key on every POST: stored responses for creations, the inbox for signals."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from orchestrator.api.idempotency import StoredResponse, run_once
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import IdempotencyConflict
from orchestrator.db.apikey_models import IdempotentResponse
from orchestrator.db.models import Document
from orchestrator.db.session import transaction
from orchestrator.service.apikeys import Principal, Scope
from tests.api.conftest import Api

CALLER = Principal(
    key_id="k",
    tenant_id="acme",
    principal="user:a",
    organizations=None,
    scopes=frozenset({Scope.ADMIN}),
)


def test_an_upload_replays_under_its_key_and_refuses_other_content(api: Api) -> None:
    headers = api.key()
    assessment = api.create_assessment(headers)["id"]
    keyed = {**headers, "Idempotency-Key": "upload-1"}
    url = f"/api/v1/assessments/{assessment}/documents"
    first = api.client.post(url, headers=keyed, files={"file": ("a.md", b"# A\n")})
    again = api.client.post(url, headers=keyed, files={"file": ("a.md", b"# A\n")})
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    other = api.client.post(url, headers=keyed, files={"file": ("b.md", b"# B\n")})
    assert (other.status_code, other.json()["code"]) == (409, "idempotency_conflict")
    with transaction() as session:
        assert session.scalar(select(func.count()).select_from(Document)) == 1


def test_signal_like_posts_map_the_header_to_the_signal_key(api: Api) -> None:
    headers = api.key()
    run_id = api.start(headers, api.create_assessment(headers)["id"], "s").json()["id"]
    url = f"/api/v1/workflows/{run_id}/cancel"
    keyed = {**headers, "Idempotency-Key": "cancel-1"}
    first = api.client.post(url, headers=keyed, json={"reason": "scope changed"})
    again = api.client.post(url, headers=keyed, json={"reason": "scope changed"})
    assert (first.status_code, again.status_code) == (202, 202)
    assert again.json()["signal_id"] == first.json()["signal_id"]
    assert again.json()["duplicate"] is True
    other = api.client.post(url, headers=keyed, json={"reason": "another reason"})
    assert (other.status_code, other.json()["code"]) == (409, "idempotency_conflict")
    signals = api.client.get(f"/api/v1/workflows/{run_id}/signals", headers=headers).json()
    keys = [s["idempotency_key"] for s in signals["items"]]
    assert keys.count("cancel-1") == 1


def test_a_request_still_in_progress_is_refused_until_it_is_stale(api: Api) -> None:
    calls: list[int] = []

    def action() -> StoredResponse:
        calls.append(1)
        if len(calls) == 1:  # the "first process" sees a second request arrive meanwhile
            with pytest.raises(Exception, match="still being handled") as caught:
                run_once(CALLER, "k1", "hash", action)
            assert getattr(caught.value, "code", None) == "idempotency_in_progress"
        return StoredResponse(201, {"n": len(calls)}, {})

    assert run_once(CALLER, "k1", "hash", action).status_code == 201
    assert len(calls) == 1
    with pytest.raises(IdempotencyConflict):
        run_once(CALLER, "k1", "other-hash", action)

    # A first attempt that died mid-way leaves a claim; once stale, a retry takes over.
    with transaction() as session:
        session.add(
            IdempotentResponse(
                tenant_id="acme",
                idempotency_key="k2",
                request_hash="hash",
                created_at=utcnow() - timedelta(hours=1),
            )
        )
    replay = run_once(CALLER, "k2", "hash", lambda: StoredResponse(201, {"took": "over"}, {}))
    assert replay.body == b'{"took":"over"}'
    with transaction() as session:
        row = session.scalar(
            select(IdempotentResponse).where(IdempotentResponse.idempotency_key == "k2")
        )
        assert row is not None and row.status_code == 201
