"""A claim holds: while one reviewer holds a gate's review, another can neither approve,
reject nor amend that draft until they take it over explicitly (audited, the holder told
through the tenant's webhooks); claims and comments over HTTP."""

from __future__ import annotations

import uuid

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from orchestrator.contracts.errors import ReviewClaimed
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.ops_models import Notification
from orchestrator.db.session import read_transaction
from orchestrator.service.amendments import amend_artifact
from orchestrator.service.approval_events import record_approval
from orchestrator.service.producer import Actor
from orchestrator.service.queries import list_artifacts, list_audit
from tests.console.kit import key
from tests.console.lifecycle_pages import person, run_at_soa_wait
from tests.support.roles import grant

TENANT = "claims-hold"
SOA = ArtifactKind.SOA
AMY = Actor(tenant_id=TENANT, actor_id="user:amy@hold")
BOB = Actor(tenant_id=TENANT, actor_id="user:bob@hold")


@pytest.fixture(scope="module")
def waiting(running: TestClient) -> uuid.UUID:
    owner = person(running, TENANT, "read", "signal", principal="user:owner@hold")
    grant(AMY, "assessor")
    grant(BOB, "ciso")
    return run_at_soa_wait(owner, TENANT, "Claims hold")[1]


def _bearer(actor: Actor) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {key('read', 'approve', tenant=TENANT, principal=actor.actor_id)}"
    }


def _claim_url(run_id: uuid.UUID) -> str:
    return f"/api/v1/workflows/{run_id}/reviews/soa/claim"


def test_only_the_holder_decides_until_the_review_is_taken_over(
    running: TestClient, waiting: uuid.UUID
) -> None:
    run_id = waiting
    amy, bob = _bearer(AMY), _bearer(BOB)
    taken = running.post(_claim_url(run_id), headers=amy)
    assert taken.status_code == 200 and taken.json()["claimed_by"] == AMY.actor_id
    assert running.get(_claim_url(run_id), headers=bob).json()["claimed_by"] == AMY.actor_id
    refused = running.post(_claim_url(run_id), headers=bob)
    assert refused.status_code == 409 and refused.json()["code"] == "review_claimed"

    [draft] = [a for a in list_artifacts(BOB, run_id, SOA.value) if a.version == 1]
    approval = running.post(
        f"/api/v1/workflows/{run_id}/approvals",
        headers=bob,
        json={"artifact_kind": "soa", "artifact_version": 1, "decision": "approved"},
    )
    assert approval.status_code == 409 and approval.json()["code"] == "review_claimed"
    with pytest.raises(ReviewClaimed):
        record_approval(BOB, run_id, "soa", 1, decision="rejected", comment="not this way")
    with pytest.raises(ReviewClaimed):
        amend_artifact(
            BOB,
            run_id,
            draft.id,
            [{"row": "any", "changes": {"owner": "bob"}}],
            reason="mine now",
            idempotency_key="bob-amends-under-amy",
        )

    over = running.post(_claim_url(run_id) + "/take-over", headers=bob)
    assert over.status_code == 200 and over.json()["claimed_by"] == BOB.actor_id
    [event] = [
        e.metadata
        for e in list_audit(BOB, run_id, limit=500).items
        if e.event_type == "lifecycle_workflow_review_claim_taken_over"
    ]
    assert event["holder"] == AMY.actor_id and event["taken_over_by"] == BOB.actor_id
    with read_transaction() as session:
        told = session.scalars(
            select(Notification).where(
                Notification.run_id == run_id, Notification.event_type == "review.claim_taken_over"
            )
        ).all()
    assert [n.payload["holder"] for n in told] == [AMY.actor_id]
    with pytest.raises(ReviewClaimed):
        record_approval(AMY, run_id, "soa", 1)  # the former holder waits her turn now

    released = running.delete(_claim_url(run_id), headers=bob)
    assert released.status_code == 204
    assert running.delete(_claim_url(run_id), headers=bob).status_code == 404
    assert running.get(_claim_url(run_id), headers=amy).json() is None


def test_comments_over_http(running: TestClient, waiting: uuid.UUID) -> None:
    url = f"/api/v1/workflows/{waiting}/reviews/soa/comments"
    amy = _bearer(AMY)
    made = running.post(url, headers=amy, json={"version": 1, "body": "Who owns backups?"})
    assert made.status_code == 201 and made.json()["author"] == AMY.actor_id
    assert running.post(url, headers=amy, json={"version": 1, "body": "a\x00b"}).status_code == 422
    assert running.post(url, headers=amy, json={"version": 9, "body": "x"}).status_code == 404
    listed = running.get(url, headers=_bearer(BOB), params={"version": 1}).json()
    assert [(c["body"], c["version"], c["row"]) for c in listed] == [("Who owns backups?", 1, None)]
    reader = {"Authorization": f"Bearer {key('read', tenant=TENANT, principal='user:r@hold')}"}
    assert running.post(url, headers=reader, json={"version": 1, "body": "x"}).status_code == 403


def test_the_console_offers_the_take_over(running: TestClient, waiting: uuid.UUID) -> None:
    assert running.post(_claim_url(waiting), headers=_bearer(AMY)).status_code == 200
    bob = person(running, TENANT, "read", "approve", principal=BOB.actor_id)
    review_url = f"/console/runs/{waiting}/artifacts/soa"
    page = bob.get(review_url).text
    assert "claimed by user:amy@hold" in page and "Take this review over" in page
    done = bob.post(f"{review_url}/take-over", {"back": review_url}, from_page=review_url)
    assert "You took this review over" in bob.get(done.headers["location"]).text
    assert running.get(_claim_url(waiting), headers=_bearer(AMY)).json()["claimed_by"] == (
        BOB.actor_id
    )
