"""A reassessment whose job fails, on PostgreSQL with real workers: it is `failed` with
its reason in the API, on the console's assessment page and in `/metrics`, instead of
staying "pending"; a retry (console button or endpoint, audited) sends it again, is
refused unless it failed, answers the first retry again for the same Idempotency-Key,
and once the fault is gone the retried reassessment is evaluated."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.api.conftest import Api
from tests.console.kit import Browser, text
from tests.continuous.kit import POLICY, Reviewed, fleet_api, new_policy_version
from tests.ops.test_metrics_health import samples, value
from tests.support.http_lifecycle import through_soa_approval

pytestmark = pytest.mark.integration

TENANT = "reassess-fails"
FAULT = "InjectedFault: fault injected while fail-reassessments.mark exists"


@pytest.fixture
def faulty(fleet: Fleet, tmp_path: Path) -> Iterator[tuple[Api, Path]]:
    """The API on the fleet's PostgreSQL, with workers on every queue whose reassessments
    fail while the returned mark file exists."""
    mark = tmp_path / "fail-reassessments.mark"
    api = fleet_api(
        fleet,
        include=("orchestrator.testing.failing_reassessments",),
        extra_env={"LIFECYCLE_FAIL_REASSESSMENTS_MARK": str(mark)},
    )
    yield api, mark


def _audit(assessed: Reviewed) -> list[dict[str, Any]]:
    """The run's whole audit log, page by page."""
    events: list[dict[str, Any]] = []
    cursor = ""
    while True:
        query = f"?cursor={cursor}" if cursor else ""
        page = assessed.get(f"/api/v1/workflows/{assessed.run_id}/audit{query}")
        events += page["items"]
        if not (cursor := page["next_cursor"]):
            return events


def _bearer(headers: dict[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


def test_a_failed_reassessment_is_shown_and_retried_to_success(
    faulty: tuple[Api, Path],
) -> None:
    api, mark = faulty
    assessed = Reviewed(api, TENANT, "reassess-fails")
    through_soa_approval(
        api, assessed.owner, assessed.reviewer, assessed.run_id, assessed.decider, "SOC 2"
    )
    documents = assessed.get(f"/api/v1/assessments/{assessed.assessment}/documents")
    policy = {d["filename"]: d["id"] for d in documents}[POLICY]
    # The database is the session's: other tests' reassessments are counted too.
    base = samples(api.client.get("/metrics").text)
    failed_before = value(base, "lifecycle_reassessments", status="failed")
    awaiting_before = value(base, "lifecycle_reassessments", status="awaiting_approval")
    mark.write_text("fail")
    new_policy_version(api, assessed.owner, assessed.assessment, policy)
    [started] = assessed.reassessments()
    failed = assessed.evaluated(started["id"])
    assert failed["status"] == "failed" and failed["error"] == FAULT, failed
    assert failed["result_artifact_id"] is None and failed["changed_rows"] == []

    scraped = samples(api.client.get("/metrics").text)
    assert value(scraped, "lifecycle_reassessments", status="failed") == failed_before + 1

    # The console shows it failed, with the reason and a retry; the retry fails again
    # while the fault lasts.
    browser = Browser(api.client)
    assert browser.sign_in(_bearer(assessed.owner)).status_code == 303
    page_url = f"/console/assessments/{assessed.assessment}"
    page = browser.get(page_url)
    assert page.status_code == 200
    assert f"new version failed – {FAULT} Retry" in text(page), text(page)
    retry_url = f"/console/reassessments/{failed['id']}/retry"
    clicked = browser.post(retry_url, {}, from_page=page_url)
    assert clicked.status_code == 303, clicked.text
    assert "sent%20again" in clicked.headers["location"], clicked.headers
    assert assessed.evaluated(failed["id"])["status"] == "failed"

    # A reader may not retry; an evaluated or pending reassessment is refused.
    url = f"/api/v1/reassessments/{failed['id']}/retry"
    reader = api.key("read", tenant=TENANT, principal="user:auditor@acme")
    assert api.client.post(url, headers=reader).status_code == 403

    mark.unlink()
    first = api.client.post(url, headers={**assessed.owner, "Idempotency-Key": "retry-1"})
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "pending" and first.json()["error"] is None
    again = api.client.post(url, headers={**assessed.owner, "Idempotency-Key": "retry-1"})
    assert again.status_code == 200 and again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    refused = api.client.post(url, headers={**assessed.owner, "Idempotency-Key": "retry-2"})
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "reassessment_not_failed"

    evaluated = assessed.evaluated(failed["id"])
    assert evaluated["status"] == "awaiting_approval", evaluated
    assert evaluated["error"] is None and evaluated["changed_rows"]
    assert api.client.post(url, headers=assessed.owner).status_code == 409
    scraped = samples(api.client.get("/metrics").text)
    assert value(scraped, "lifecycle_reassessments", status="failed") == failed_before
    assert (
        value(scraped, "lifecycle_reassessments", status="awaiting_approval") == awaiting_before + 1
    )
    after = text(browser.get(page_url))
    assert "awaiting approval" in after and FAULT not in after

    trail = [
        (e["event_type"], e["actor_id"], e["metadata"])
        for e in _audit(assessed)
        if e["event_type"].startswith("lifecycle_workflow_reassessment_")
    ]
    failures = [t for t in trail if t[0] == "lifecycle_workflow_reassessment_failed"]
    retries = [t for t in trail if t[0] == "lifecycle_workflow_reassessment_retried"]
    assert [(actor, meta["reason"]) for _, actor, meta in failures] == [
        ("system:orchestrator", FAULT)
    ] * 2
    assert sorted((actor, meta["attempt"]) for _, actor, meta in retries) == [
        ("user:owner@acme", 2),
        ("user:owner@acme", 3),
    ]
