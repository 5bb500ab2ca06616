"""How a run was started and the authority it acts with, kept on the run (embedded)."""

from __future__ import annotations

import uuid

import pytest
from fastapi.testclient import TestClient

from orchestrator.api import app
from orchestrator.contracts.errors import ActiveRunExists, InvalidInput
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.engine.coordinator import coordinate
from orchestrator.service.apikeys import create_key
from orchestrator.service.operations import cancel_run
from orchestrator.service.producer import create_assessment, get_run, start_lifecycle
from orchestrator.service.queries import get_assessment
from orchestrator.service.read_models import RunView
from tests.support.sweeps import Clock, drive_to, new_tenant, no_kick, start_run


def test_a_reassessment_retry_or_replay_names_a_finished_run_of_the_same_assessment(
    quick: Clock,
) -> None:
    owner, reviewer = new_tenant()
    first = start_run(owner)
    assessment_id = get_run(owner, first).assessment_id

    def start(key: str, origin: str, origin_ref: str | None = None) -> RunView:
        return start_lifecycle(
            owner, assessment_id, key, kick=no_kick, origin=origin, origin_ref=origin_ref
        )

    with pytest.raises(InvalidInput, match="unknown start origin 'cron'; known: user, api"):
        start("a", origin="cron")
    with pytest.raises(InvalidInput, match="names what it follows"):
        start("b", origin="schedule")
    with pytest.raises(InvalidInput, match="origin_ref is for schedule"):
        start("c", origin="api", origin_ref="nightly")
    with pytest.raises(InvalidInput, match="is a run id"):
        start("d", origin="retry", origin_ref="yesterday")
    with pytest.raises(InvalidInput, match="a retry follows a cancelled run; run .* is pending"):
        start("e", origin="retry", origin_ref=str(first))
    other = create_assessment(owner, "org-1", "Another")
    with pytest.raises(InvalidInput, match="is not a run of assessment"):
        start_lifecycle(owner, other.id, "f", origin="retry", origin_ref=str(first), kick=no_kick)
    with pytest.raises(ActiveRunExists):
        start("g", origin="api")

    cancel_run(owner, first, reason="wrong scope", idempotency_key="cancel", kick=no_kick)
    coordinate(first)
    retried = start("retry-1", origin="retry", origin_ref=str(first))
    assert (retried.origin, retried.origin_ref) == ("retry", str(first))
    assert retried.authority == {"principal": owner.actor_id, "key_id": None, "scopes": []}

    drive_to(reviewer, retried.id, "wait_for_report_approval")
    ScriptedReviewer(reviewer).answer(get_run(owner, retried.id))
    coordinate(retried.id)
    assert get_run(owner, retried.id).status == "completed"
    assert get_assessment(owner, assessment_id).status == "closed"
    again = start("next-year", origin="reassessment", origin_ref=str(retried.id))
    coordinate(again.id)
    reopened = get_run(owner, again.id)  # not blocked: the assessment reopened for it
    assert (reopened.status, reopened.current_step) == ("running", "ingest_documents")
    assert get_assessment(owner, assessment_id).status == "active"


def test_the_http_api_records_the_origin_and_the_keys_authority(quick: Clock) -> None:
    view, secret = create_key("acme", "user:ops@acme", ["read", "signal"])
    headers = {"Authorization": f"Bearer {secret}"}
    client = TestClient(app)
    made = client.post(
        "/api/v1/assessments",
        json={"organization_id": "org-1", "name": "Scheduled"},
        headers={**headers, "Idempotency-Key": uuid.uuid4().hex},
    ).json()
    path = f"/api/v1/assessments/{made['id']}/workflows/lifecycle/start"

    refused = client.post(
        path, json={"origin": "user"}, headers={**headers, "Idempotency-Key": "u"}
    )
    assert refused.status_code == 422
    started = client.post(
        path,
        json={"origin": "schedule", "origin_ref": "quarterly-soc2"},
        headers={**headers, "Idempotency-Key": "s"},
    )
    assert started.status_code == 201, started.text
    run = started.json()
    assert (run["origin"], run["origin_ref"]) == ("schedule", "quarterly-soc2")
    assert run["authority"] == {
        "principal": "user:ops@acme",
        "key_id": view.key_id,
        "scopes": ["read", "signal"],
    }
