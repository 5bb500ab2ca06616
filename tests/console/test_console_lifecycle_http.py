"""A whole lifecycle taken to completed through the console's pages over HTTP, with a real
in-process worker: two reviewers, one rejection answered by a new draft, a double-posted
decision that acts once, the queue count, the diff, the live fragment, the report inline,
and a reprocess planned (dry run) before it is confirmed."""

from __future__ import annotations

import re
import uuid

from fastapi.testclient import TestClient

from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.definition import APPROVED_AT
from orchestrator.producer import Actor, get_run
from orchestrator.queries import list_approvals, list_artifacts
from tests.console.kit import SAMPLES, Browser, key, text, wait_for

TENANT = "lifecycle-http"


def _person(client: TestClient, *scopes: str, principal: str) -> Browser:
    # Each person gets a client of their own: their own cookie jar.
    browser = Browser(TestClient(client.app))
    assert browser.sign_in(key(*scopes, tenant=TENANT, principal=principal)).status_code == 303
    return browser


def _form_key(page: str, action: str) -> str:
    form = page[page.index(f'action="{action}"'):]
    found = re.search(r'name="key" value="([^"]+)"', form)
    assert found, f"no key in the form {action}"
    return found.group(1)


def _wait_status(run_id: uuid.UUID, *statuses: str) -> None:
    actor = Actor(tenant_id=TENANT, actor_id="test")
    wait_for(lambda: get_run(actor, run_id).status in statuses, f"the run {statuses}")


def _wait_moved_on(run_id: uuid.UUID, step: str | None) -> None:
    actor = Actor(tenant_id=TENANT, actor_id="test")

    def moved() -> bool:
        run = get_run(actor, run_id)
        return run.current_step != step or run.status != "waiting_for_approval"

    wait_for(moved, "the run to take the approval")


def test_two_reviewers_take_a_lifecycle_to_completed_through_the_pages(
        running: TestClient) -> None:
    owner = _person(running, "read", "signal", "operate", principal="user:owner@x")
    ana = _person(running, "read", "approve", principal="user:ana@x")
    bo = _person(running, "read", "approve", principal="user:bo@x")

    created = owner.post("/console/assessments", {"organization_id": "org-x",
                                                  "name": "Console lifecycle"},
                         from_page="/console/assessments")
    page_url = created.headers["location"]
    files = [("files", (p.name, p.read_bytes(), "text/markdown"))
             for p in sorted(SAMPLES.iterdir())]
    page = owner.client.get(page_url).text
    uploaded = owner.client.post(f"{page_url}/documents", files=files,
                                 data={"csrf_token": re.search(
                                     r'name="csrf_token" value="([^"]+)"', page).group(1)})
    assert uploaded.text.count('class="result-uploaded"') == len(files)
    page = owner.client.get(page_url).text
    started = owner.post(f"{page_url}/start", {"key": _form_key(page, page_url + "/start")},
                         from_page=page_url)
    run_url = started.headers["location"]
    run_id = uuid.UUID(run_url.rsplit("/", 1)[1])

    _wait_status(run_id, "waiting_for_input")
    live = text(owner.get(f"{run_url}/live"))
    assert "waiting for input" in live and f"{len(files)} of {len(files)}" in live
    page = owner.get(run_url).text
    chosen = owner.post(f"{run_url}/framework", {"key": _form_key(page, f"{run_url}/framework"),
                                                 "framework": "SCF"}, from_page=run_url)
    assert re.search(r"framework selected: (applied|pending)",
                     text(owner.get(chosen.headers["location"])))

    rejected_once = False
    while True:
        _wait_status(run_id, "waiting_for_approval", "waiting_for_input", "completed")
        run = get_run(Actor(tenant_id=TENANT, actor_id="t"), run_id)
        if run.status == "completed":
            break
        gate = APPROVED_AT[Step(run.current_step or "")].value
        if run.status == "waiting_for_input":  # sent back: the operator asks for a new draft
            page = owner.get(run_url).text
            assert "Draft a new version" in page
            owner.post(f"{run_url}/new-version", {
                "key": _form_key(page, f"{run_url}/new-version"), "artifact_kind": gate,
                "reason": "apply the comments"}, from_page=run_url)
            _wait_status(run_id, "waiting_for_approval")
            continue
        reviewer = ana if gate in ("soa", "maturity_assessment", "report") else bo
        assert 'aria-label="1 waiting for you"' in reviewer.get("/console/queue").text
        version = run.context["artifacts"][gate]
        review_url = f"{run_url}/artifacts/{gate}?version={version}"
        review = reviewer.get(review_url)
        assert review.status_code == 200 and "Your decision" in review.text
        if gate == "gap_analysis" and not rejected_once:
            rejected_once = True
            sent = reviewer.post(f"{run_url}/artifacts/{gate}/decision", {
                "key": _form_key(review.text, f"{run_url}/artifacts/{gate}/decision"),
                "version": version, "decision": "rejected", "role": "assessor",
                "comment": "cite the continuity plan"}, from_page=review_url)
            assert "rejected: recorded" in text(reviewer.get(sent.headers["location"]))
            _wait_status(run_id, "waiting_for_input")
            continue
        if gate == "gap_analysis":
            assert "Changes since v1" in review.text
        form_key = _form_key(review.text, f"{run_url}/artifacts/{gate}/decision")
        body = {"key": form_key, "version": version, "decision": "approved",
                "role": "assessor", "comment": "reviewed"}
        first = reviewer.post(f"{run_url}/artifacts/{gate}/decision", body, from_page=review_url)
        again = reviewer.post(f"{run_url}/artifacts/{gate}/decision", body,
                              from_page=review_url)
        assert first.headers["location"] == again.headers["location"], "a double click"
        reused = reviewer.post(f"{run_url}/artifacts/{gate}/decision",
                               {**body, "comment": "something else"}, from_page=review_url)
        assert reused.status_code == 409, "the same form key with another decision"
        assert re.search(r"approved: (applied|pending)", text(reviewer.get(
            first.headers["location"])))
        _wait_moved_on(run_id, run.current_step)

    actor = Actor(tenant_id=TENANT, actor_id="t")
    approvals = list_approvals(actor, run_id)
    assert [(a.artifact_kind, a.artifact_version, a.decision, a.approver_id)
            for a in approvals] == [
        ("soa", 1, "approved", "user:ana@x"),
        ("gap_analysis", 1, "rejected", "user:bo@x"),
        ("gap_analysis", 2, "approved", "user:bo@x"),
        ("maturity_assessment", 1, "approved", "user:ana@x"),
        ("poam", 1, "approved", "user:bo@x"),
        ("report", 1, "approved", "user:ana@x")]
    assert "0 waiting for you" in ana.get("/console/queue").text
    page = text(owner.get(run_url))
    assert "completed" in page and "close_assessment" in page
    assert "gap_analysis v1 rejected by user:bo@x (assessor): “cite the continuity plan”" in page
    report = owner.get(f"{run_url}/artifacts/report?version=1")
    assert '<iframe class="report"' in report.text
    shown = owner.get(f"{run_url}/artifacts/report/1/file")
    assert shown.status_code == 200 and shown.headers["content-type"].startswith("text/html")
    assert "sandbox" in shown.headers["content-security-policy"]
    soa = text(owner.get(f"{run_url}/artifacts/soa"))
    assert "Statement of applicability" in soa and "This is the first version" in soa
    evidence = owner.get(f"{run_url}/artifacts/evidence_analysis")
    assert "Cited passages" in evidence.text and "<q>" in evidence.text
    assert "Your decision" not in evidence.text, "evidence analysis has no gate"


def test_reprocess_shows_its_plan_before_the_confirm(running: TestClient) -> None:
    owner = _person(running, "read", "signal", "operate", principal="user:owner@y")
    created = owner.post("/console/assessments", {"organization_id": "org-y",
                                                  "name": "Reprocess"},
                         from_page="/console/assessments")
    page_url = created.headers["location"]
    sample = sorted(SAMPLES.iterdir())[0]
    page = owner.client.get(page_url).text
    owner.client.post(f"{page_url}/documents",
                      files=[("files", (sample.name, sample.read_bytes(), "text/markdown"))],
                      data={"csrf_token": re.search(r'name="csrf_token" value="([^"]+)"',
                                                    page).group(1)})
    page = owner.client.get(page_url).text
    run_url = owner.post(f"{page_url}/start", {"key": _form_key(page, page_url + "/start")},
                         from_page=page_url).headers["location"]
    run_id = uuid.UUID(run_url.rsplit("/", 1)[1])
    _wait_status(run_id, "waiting_for_input")
    page = owner.get(run_url).text
    owner.post(f"{run_url}/framework", {"key": _form_key(page, f"{run_url}/framework")},
               from_page=run_url)
    _wait_status(run_id, "waiting_for_approval")

    page = owner.get(run_url).text
    form_key = _form_key(page, f"{run_url}/reprocess/plan")
    body = {"key": form_key, "step": "create_soa_draft", "reason": "new inventory",
            "new_version": "yes"}
    plan = owner.post(f"{run_url}/reprocess/plan", body, from_page=run_url)
    shown = text(plan)
    assert plan.status_code == 200 and "nothing has changed yet" in shown
    assert "Drafts superseded soa v1" in shown
    actor = Actor(tenant_id=TENANT, actor_id="t")
    assert [a.version for a in list_artifacts(actor, run_id, "soa")] == [1]
    unconfirmed = owner.post(f"{run_url}/reprocess", body, from_page=run_url)
    assert unconfirmed.status_code == 422
    done = owner.post(f"{run_url}/reprocess", {**body, "confirm": "yes"}, from_page=run_url)
    assert re.search(r"reprocess create_soa_draft: (applied|pending)",
                     text(owner.get(done.headers["location"])))
    wait_for(lambda: [a.version for a in list_artifacts(actor, run_id, "soa")] == [1, 2],
             "the new SoA draft")
    cancelled = owner.post(f"{run_url}/control/cancel", {
        "key": "cancel-key-1", "reason": "test over", "confirm": "yes"}, from_page=run_url)
    assert re.search(r"cancel: (applied|pending)",
                     text(owner.get(cancelled.headers["location"])))
    _wait_status(run_id, "cancelled")
