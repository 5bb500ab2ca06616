"""A file uploaded while a lifecycle runs, on PostgreSQL with real workers: before the
run's ingestion it is ingested into the run; after it, the API and the console say it is
queued for the next reassessment (it no longer reads "waiting for ingestion" for good),
and the next reassessment ingests it and counts it among the documents that changed."""

from __future__ import annotations

from typing import Any

import pytest

from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.api.conftest import SAMPLES, Api, waiting_at
from tests.console.kit import Browser, text
from tests.continuous.kit import POLICY, fleet_api, new_policy_version
from tests.support.http_lifecycle import through_soa_approval
from tests.support.polling import poll

pytestmark = pytest.mark.integration

TENANT = "late-files"
LATE = "password-standard.md"
LATE_TEXT = (
    b"# Password standard\n\n## Passwords\n\nPasswords are at least 14 characters long, "
    b"checked against known breached passwords and never reused for 24 generations. "
    b"Multi-factor authentication protects every remote and administrative login.\n"
)


@pytest.fixture
def api(fleet: Fleet) -> Api:
    return fleet_api(fleet)


def _documents(api: Api, headers: dict[str, str], assessment: str) -> dict[str, dict[str, Any]]:
    listed = api.client.get(f"/api/v1/assessments/{assessment}/documents", headers=headers)
    assert listed.status_code == 200, listed.text
    return {d["filename"]: d for d in listed.json()}


def _console_says(browser: Browser, url: str) -> str:
    page = browser.get(url)
    assert page.status_code == 200, page.text
    return text(page)


def test_a_file_after_ingestion_is_queued_for_the_next_reassessment(api: Api) -> None:
    owner = api.key("signal", "read", tenant=TENANT, principal="user:owner@acme")
    reviewer = api.key(
        "approve", "read", tenant=TENANT, principal="user:reviewer@acme", roles=("assessor",)
    )
    decider = api.key("approve", "read", tenant=TENANT, principal="user:control-owner@acme")
    assessment = api.create_assessment(owner)["id"]
    samples = sorted(SAMPLES.iterdir())
    first = api.upload(owner, assessment, samples[0].name, samples[0].read_bytes())
    assert first.status_code == 201, first.text
    assert first.json()["status"] == "uploaded" and first.json()["waiting_for"] == "ingestion"
    for path in samples[1:]:
        assert api.upload(owner, assessment, path.name, path.read_bytes()).status_code == 201
    started = api.start(owner, assessment, "late-files")
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]
    api.follow(owner, run_id, waiting_at("wait_for_framework_selection", "waiting_for_input"))
    # Uploaded before the run's ingestion: ingested into the run.
    before = _documents(api, owner, assessment)
    assert {d["status"] for d in before.values()} == {"ingested"}, before
    assert {d["waiting_for"] for d in before.values()} == {None}

    late = api.upload(owner, assessment, LATE, LATE_TEXT)
    assert late.status_code == 201, late.text
    assert late.json()["status"] == "uploaded", late.text
    assert late.json()["waiting_for"] == "reassessment", late.text
    assert _documents(api, owner, assessment)[LATE]["waiting_for"] == "reassessment"
    browser = Browser(api.client)
    assert browser.sign_in(owner["Authorization"].removeprefix("Bearer ")).status_code == 303
    queued = f"{LATE} text/markdown queued for the next reassessment"
    assessment_page = f"/console/assessments/{assessment}"
    assert queued in _console_says(browser, assessment_page)
    assert queued in _console_says(browser, f"/console/runs/{run_id}")

    through_soa_approval(api, owner, reviewer, run_id, decider, "SOC 2")
    waiting = _documents(api, owner, assessment)[LATE]
    assert waiting["status"] == "uploaded" and waiting["waiting_for"] == "reassessment"
    assert queued in _console_says(browser, assessment_page)

    # A new version of a cited document starts a reassessment: it takes the queued file.
    documents = _documents(api, owner, assessment)
    policy = documents[POLICY]["id"]
    new_version = new_policy_version(api, owner, assessment, policy)
    [reassessment] = poll(
        lambda: api.client.get(
            f"/api/v1/assessments/{assessment}/reassessments", headers=owner
        ).json(),
        lambda found: len(found) == 1 and found[0]["status"] != "pending",
        timeout_s=120,
        what="the reassessment's evaluation",
    )
    assert reassessment["status"] in ("awaiting_approval", "no_change"), reassessment["error"]
    # The document's earlier version and the new one, then the file that waited.
    assert reassessment["changed_documents"] == [policy, new_version, waiting["id"]]
    ingested = _documents(api, owner, assessment)[LATE]
    assert ingested["status"] == "ingested" and ingested["waiting_for"] is None, ingested
    page = _console_says(browser, assessment_page)
    assert f"{LATE} text/markdown ingested" in page and "queued for the next" not in page
