"""A whole lifecycle taken to completed through the console's pages over HTTP, with a real
in-process worker: two reviewers, one rejection answered by a new draft, a double-posted
decision that acts once, the queue count, the diff, the live fragment, the report inline,
a reprocess planned (dry run) before it is confirmed; and the webhooks of run transitions
and approval requests, delivered by the worker, each once, signed, with a console link."""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter

from fastapi.testclient import TestClient

from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.demo.reviewer import ScriptedReviewer, drive
from orchestrator.lifecycle.definition import APPROVED_AT
from orchestrator.notifications import signing
from orchestrator.notifications.subscriptions import subscribe
from orchestrator.service.documents import upload_document
from orchestrator.service.operations import cancel_run
from orchestrator.service.producer import Actor, create_assessment, get_run, start_lifecycle
from orchestrator.service.queries import list_approvals, list_artifacts
from tests.console.kit import SAMPLES, Browser, text, token, wait_for
from tests.console.lifecycle_pages import (
    decide_undecided,
    form_key,
    person,
    run_at_soa_wait,
    wait_status,
)
from tests.support.roles import grant
from tests.support.webhook_receiver import webhook_receiver

TENANT = "lifecycle-http"


def _wait_moved_on(run_id: uuid.UUID, step: str | None) -> None:
    actor = Actor(tenant_id=TENANT, actor_id="test")

    def moved() -> bool:
        run = get_run(actor, run_id)
        return run.current_step != step or run.status != "waiting_for_approval"

    wait_for(moved, "the run to take the approval")


def test_two_reviewers_take_a_lifecycle_to_completed_through_the_pages(running: TestClient) -> None:
    owner = person(running, TENANT, "read", "signal", "operate", principal="user:owner@x")
    ana = person(running, TENANT, "read", "approve", principal="user:ana@x")
    bo = person(running, TENANT, "read", "approve", principal="user:bo@x")
    grant(Actor(tenant_id=TENANT, actor_id="user:ana@x"), "assessor")
    grant(Actor(tenant_id=TENANT, actor_id="user:bo@x"), "compliance_lead")

    created = owner.post(
        "/console/assessments",
        {"organization_id": "org-x", "name": "Console lifecycle"},
        from_page="/console/assessments",
    )
    page_url = created.headers["location"]
    files = [
        ("files", (p.name, p.read_bytes(), "text/markdown")) for p in sorted(SAMPLES.iterdir())
    ]
    page = owner.client.get(page_url).text
    uploaded = owner.client.post(
        f"{page_url}/documents",
        files=files,
        data={"csrf_token": token(page)},
    )
    assert uploaded.text.count('class="result-uploaded"') == len(files)
    page = owner.client.get(page_url).text
    started = owner.post(
        f"{page_url}/start", {"key": form_key(page, page_url + "/start")}, from_page=page_url
    )
    run_url = started.headers["location"]
    run_id = uuid.UUID(run_url.rsplit("/", 1)[1])

    wait_status(TENANT, run_id, "waiting_for_input")
    live = text(owner.get(f"{run_url}/live"))
    assert "waiting for input" in live and f"{len(files)} of {len(files)}" in live
    page = owner.get(run_url).text
    chosen = owner.post(
        f"{run_url}/framework",
        {"key": form_key(page, f"{run_url}/framework"), "frameworks": "SOC 2"},
        from_page=run_url,
    )
    assert re.search(
        r"framework selected: (applied|pending)", text(owner.get(chosen.headers["location"]))
    )
    wait_status(TENANT, run_id, "waiting_for_approval")
    _approve_the_scope(ana, run_url)

    rejected_once = False
    while True:
        wait_status(TENANT, run_id, "waiting_for_approval", "waiting_for_input", "completed")
        run = get_run(Actor(tenant_id=TENANT, actor_id="t"), run_id)
        if run.status == "completed":
            break
        gate = APPROVED_AT[Step(run.current_step or "")].value
        if run.status == "waiting_for_input":  # sent back: the operator asks for a new draft
            page = owner.get(run_url).text
            assert "Draft a new version" in page
            owner.post(
                f"{run_url}/new-version",
                {
                    "key": form_key(page, f"{run_url}/new-version"),
                    "artifact_kind": gate,
                    "reason": "apply the comments",
                },
                from_page=run_url,
            )
            wait_status(TENANT, run_id, "waiting_for_approval")
            continue
        reviewer = ana if gate in ("soa", "maturity_assessment", "report") else bo
        version = run.context["artifacts"][gate]
        if decide_undecided(bo if reviewer is ana else ana, TENANT, run_url, run_id, gate, version):
            continue  # the other reviewer decided the rows: the amended version waits
        assert 'aria-label="1 waiting for you"' in reviewer.get("/console/queue").text
        review_url = f"{run_url}/artifacts/{gate}?version={version}"
        review = reviewer.get(review_url)
        assert review.status_code == 200 and "Record decision" in review.text
        if gate == "gap_analysis" and not rejected_once:
            rejected_once = True
            sent = reviewer.post(
                f"{run_url}/artifacts/{gate}/decision",
                {
                    "key": form_key(review.text, f"{run_url}/artifacts/{gate}/decision"),
                    "version": version,
                    "decision": "rejected",
                    "role": "compliance_lead",
                    "comment": "cite the continuity plan",
                },
                from_page=review_url,
            )
            assert "rejected: recorded" in text(reviewer.get(sent.headers["location"]))
            wait_status(TENANT, run_id, "waiting_for_input")
            continue
        if gate == "gap_analysis":
            assert "Changes since v1" in review.text
        decision_key = form_key(review.text, f"{run_url}/artifacts/{gate}/decision")
        body = {
            "key": decision_key,
            "version": version,
            "decision": "approved",
            "role": "assessor" if reviewer is ana else "compliance_lead",
            "comment": "reviewed",
        }
        first = reviewer.post(f"{run_url}/artifacts/{gate}/decision", body, from_page=review_url)
        again = reviewer.post(f"{run_url}/artifacts/{gate}/decision", body, from_page=review_url)
        assert first.headers["location"] == again.headers["location"], "a double click"
        reused = reviewer.post(
            f"{run_url}/artifacts/{gate}/decision",
            {**body, "comment": "something else"},
            from_page=review_url,
        )
        assert reused.status_code == 409, "the same form key with another decision"
        assert re.search(
            r"approved: (applied|pending)", text(reviewer.get(first.headers["location"]))
        )
        _wait_moved_on(run_id, run.current_step)

    actor = Actor(tenant_id=TENANT, actor_id="t")
    approvals = list_approvals(actor, run_id)
    assert [
        (a.artifact_kind, a.artifact_version, a.decision, a.approver_id) for a in approvals
    ] == [
        ("scope", 1, "approved", "user:ana@x"),
        ("soa", 2, "approved", "user:ana@x"),
        ("gap_analysis", 1, "rejected", "user:bo@x"),
        ("gap_analysis", 2, "approved", "user:bo@x"),
        ("maturity_assessment", 1, "approved", "user:ana@x"),
        ("poam", 2, "approved", "user:bo@x"),
        ("report", 1, "approved", "user:ana@x"),
    ]
    assert "0 waiting for you" in ana.get("/console/queue").text
    page = text(owner.get(run_url))
    assert "completed" in page and "close_assessment" in page
    assert (
        "gap_analysis v1 rejected by user:bo@x (compliance_lead): “cite the continuity "
        "plan”" in page
    )
    report = owner.get(f"{run_url}/artifacts/report?version=1")
    assert '<iframe class="report"' in report.text
    shown = owner.get(f"{run_url}/artifacts/report/1/file")
    assert shown.status_code == 200 and shown.headers["content-type"].startswith("text/html")
    assert "sandbox" in shown.headers["content-security-policy"]
    soa = text(owner.get(f"{run_url}/artifacts/soa?version=1"))
    assert "Statement of applicability" in soa and "This is the first version" in soa
    evidence = owner.get(f"{run_url}/artifacts/evidence_analysis")
    assert "Cited passages" in evidence.text and "<q>" in evidence.text
    assert "Record decision" not in evidence.text, "evidence analysis has no gate"
    # Its documents table opens each document's judgement (the owner reads, not overrides).
    assert "/judgement" in evidence.text and ": its judgement" in text(evidence)
    assert ": its judgement, override it" not in text(evidence)


def _approve_the_scope(reviewer: Browser, run_url: str) -> None:
    """The scope waits for a decision beside the SoA (until the report's gate): the run's
    page and the queue offer it."""
    assert "Review scope v1" in reviewer.get("/console/queue").text
    review_url = f"{run_url}/artifacts/scope?version=1"
    review = reviewer.get(review_url).text
    done = reviewer.post(
        f"{run_url}/artifacts/scope/decision",
        {
            "key": form_key(review, f"{run_url}/artifacts/scope/decision"),
            "version": "1",
            "decision": "approved",
            "role": "assessor",
        },
        from_page=review_url,
    )
    shown = text(reviewer.get(done.headers["location"]))
    assert re.search(r"scope v1 approved: (applied|pending)", shown)
    wait_for(lambda: "Review scope v1" not in reviewer.get(run_url).text, "the scope approved")


def _a_queue_follows_granted_roles(running: TestClient, run_url: str) -> None:
    """Approve scope alone puts nothing in a queue: a role must be granted; a role not
    held is refused even when posted by hand."""
    cy = person(running, TENANT, "read", "approve", principal="user:cy@y")
    assert "Nothing is waiting for you" in text(cy.get("/console/queue"))
    review_url = f"{run_url}/artifacts/soa?version=1"
    assert "Record decision" not in cy.get(review_url).text
    grant(Actor(tenant_id=TENANT, actor_id="user:cy@y"), "ciso")
    queue = cy.get("/console/queue").text
    assert "2 waiting for you" in queue and "Review soa v1" in queue
    assert "Review scope v1" in queue, "the scope waits beside the SoA"
    review = cy.get(review_url).text
    assert '<option value="ciso">' in review and '<option value="assessor">' not in review
    claimed = cy.post(
        f"{run_url}/artifacts/soa/decision",
        {"key": "claimed-role-1", "version": "1", "decision": "approved", "role": "assessor"},
        from_page=review_url,
    )
    assert claimed.status_code == 422 and "assessor" in text(claimed)


def test_reprocess_shows_its_plan_before_the_confirm(running: TestClient) -> None:
    owner = person(running, TENANT, "read", "signal", "operate", principal="user:owner@y")
    run_url, run_id = run_at_soa_wait(owner, TENANT, "Reprocess")

    _a_queue_follows_granted_roles(running, run_url)
    page = owner.get(run_url).text
    plan_key = form_key(page, f"{run_url}/reprocess/plan")
    body = {
        "key": plan_key,
        "step": "create_soa_draft",
        "reason": "new inventory",
        "new_version": "yes",
    }
    plan = owner.post(f"{run_url}/reprocess/plan", body, from_page=run_url)
    shown = text(plan)
    assert plan.status_code == 200 and "nothing has changed yet" in shown
    assert "Drafts superseded soa v1" in shown
    actor = Actor(tenant_id=TENANT, actor_id="t")
    assert [a.version for a in list_artifacts(actor, run_id, "soa")] == [1]
    unconfirmed = owner.post(f"{run_url}/reprocess", body, from_page=run_url)
    assert unconfirmed.status_code == 422
    done = owner.post(f"{run_url}/reprocess", {**body, "confirm": "yes"}, from_page=run_url)
    assert re.search(
        r"reprocess create_soa_draft: (applied|pending)", text(owner.get(done.headers["location"]))
    )
    wait_for(
        lambda: [a.version for a in list_artifacts(actor, run_id, "soa")] == [1, 2],
        "the new SoA draft",
    )
    cancelled = owner.post(
        f"{run_url}/control/cancel",
        {"key": "cancel-key-1", "reason": "test over", "confirm": "yes"},
        from_page=run_url,
    )
    assert re.search(r"cancel: (applied|pending)", text(owner.get(cancelled.headers["location"])))
    wait_status(TENANT, run_id, "cancelled")


def test_a_reviewer_amends_a_row_and_the_approval_binds_to_the_new_version(
    running: TestClient,
) -> None:
    owner = person(running, TENANT, "read", "signal", principal="user:owner@z")
    run_url, run_id = run_at_soa_wait(owner, TENANT, "Amend")
    grant(Actor(tenant_id=TENANT, actor_id="user:amy@z"))
    amy = person(running, TENANT, "read", "approve", principal="user:amy@z")
    review_url = f"{run_url}/artifacts/soa"
    page = amy.get(review_url).text
    assert "Amend rows" in page and "makes version 2" in page
    artifact_id = re.search(r'name="artifact_id" value="([^"]+)"', page)
    row = re.search(r'name="rows" value="([^"]+)" form="amend-form"', page)
    assert artifact_id and row
    amend = {
        "key": form_key(page, f"{review_url}/amend"),
        "artifact_id": artifact_id.group(1),
        "row": row.group(1),
        "applicable": "no",
        "justification": "No such system in scope",
        "owner": "Head of IT",
        "reason": "scoped out in the kick-off",
    }
    empty = amy.post(
        f"{review_url}/amend",
        {**amend, "applicable": "", "justification": "", "owner": ""},
        from_page=review_url,
    )
    assert empty.status_code == 422, "a change with nothing in it is refused"
    done = amy.post(f"{review_url}/amend", amend, from_page=review_url)
    assert done.status_code == 303
    shown = text(amy.get(done.headers["location"]))
    assert f"soa v2 drafted from v1: row {row.group(1)}" in shown
    again = amy.post(f"{review_url}/amend", amend, from_page=review_url)
    assert again.status_code == 303, "the same form posted twice acts once"
    actor = Actor(tenant_id=TENANT, actor_id="t")
    assert [a.version for a in list_artifacts(actor, run_id, "soa")] == [1, 2]
    wait_for(
        lambda: get_run(actor, run_id).context["artifacts"].get("soa") == 2,
        "the run to wait for the amended SoA",
    )
    page = amy.get(f"{review_url}?version=2").text
    assert "Head of IT" in page and "No such system in scope" in page
    assert "Record decision" not in page, "who amended a draft does not approve it"
    assert "you amended this version of the soa, so another reviewer must decide it" in text(
        amy.get(f"{review_url}?version=2")
    )
    grant(Actor(tenant_id=TENANT, actor_id="user:bob@z"))
    bob = person(running, TENANT, "read", "approve", principal="user:bob@z")
    assert decide_undecided(amy, TENANT, run_url, run_id, "soa", 2), "the rest decided in bulk"
    page = bob.get(f"{review_url}?version=3").text
    bob.post(
        f"{review_url}/decision",
        {
            "key": form_key(page, f"{review_url}/decision"),
            "version": "3",
            "decision": "approved",
            "role": "assessor",
        },
        from_page=f"{review_url}?version=3",
    )
    _wait_moved_on(run_id, "wait_for_soa_approval")
    [approval] = [a for a in list_approvals(actor, run_id) if a.artifact_kind == "soa"]
    assert (approval.artifact_version, approval.decision) == (3, "approved")


# --- webhooks of run transitions, delivered by the worker ----------------------------------

HOOKED = Actor(tenant_id="webhooks", actor_id="user:owner@hooks")
REVIEWER = Actor(tenant_id="webhooks", actor_id="user:rev@hooks")
SECRET = "s" * 32


def _documents(received: list) -> list[dict]:
    for post in received:
        signing.verify(SECRET, post.headers[signing.SIGNATURE_HEADER], post.body)
    return [json.loads(post.body) for post in received]


def _arrived(received: list, run_id: object) -> set[tuple[str, int]]:
    counts = Counter(d["type"] for d in _documents(received) if d["run_id"] == str(run_id))
    return set(counts.items())


def test_every_transition_is_told_once_and_approval_requests_link_the_console(
    running: TestClient,
) -> None:
    with webhook_receiver() as receiver:
        subscribe(HOOKED, receiver.url, secret=SECRET)
        assessment = create_assessment(HOOKED, "hooks-org", "Webhooks")
        for path in sorted(SAMPLES.iterdir()):
            upload_document(HOOKED, assessment.id, path.name, path.read_bytes())
        run = start_lifecycle(HOOKED, assessment.id, "webhooks-1")
        grant(REVIEWER, "assessor")
        done = drive(ScriptedReviewer(REVIEWER, say=lambda _: None), run.id, 120)
        assert done.status == "completed"
        # Deliveries run concurrently and arrive in any order: wait for the last of each.
        wait_for(
            lambda: (
                _arrived(receiver.received, run.id)
                >= {
                    ("run.completed", 1),
                    ("approval.requested", 5),
                    ("run.step_started", 20),
                    ("run.step_completed", 20),
                    ("run.waiting", 7),
                }
            ),
            "the run's events delivered",
        )
        events = [d for d in _documents(receiver.received) if d["run_id"] == str(run.id)]

        ids = [d["id"] for d in events]
        assert len(ids) == len(set(ids)), "each event once"
        types = Counter(d["type"] for d in events)
        assert types["run.step_started"] == types["run.step_completed"] == 20
        assert types["run.completed"] == 1 and types["approval.requested"] == 5
        waits = [d["data"]["step"] for d in events if d["type"] == "run.waiting"]
        # Deliveries run concurrently: receivers get them in any order.
        assert sorted(waits) == sorted(
            [
                "wait_for_documents",
                "wait_for_framework_selection",
                "wait_for_soa_approval",
                "wait_for_gap_approval",
                "wait_for_maturity_approval",
                "wait_for_poam_approval",
                "wait_for_report_approval",
            ]
        )
        requested = [d["data"] for d in events if d["type"] == "approval.requested"]
        assert sorted((r["gate"], r["version"]) for r in requested) == [
            ("gap_analysis", 1),
            ("maturity_assessment", 1),
            ("poam", 1),
            ("report", 1),
            ("soa", 1),
        ]
        [soa] = [r for r in requested if r["gate"] == "soa"]
        assert soa["console_url"] == (
            f"http://127.0.0.1:8000/console/runs/{run.id}/artifacts/soa?version=1"
        )
        started = {d["data"]["step"] for d in events if d["type"] == "run.step_started"}
        assert started == {step.value for step in Step}

        second = create_assessment(HOOKED, "hooks-org", "Cancelled")
        cancelled = start_lifecycle(HOOKED, second.id, "webhooks-2")
        wait_for(
            lambda: get_run(HOOKED, cancelled.id).status == "waiting_for_input",
            "the run to wait for documents",
        )
        cancel_run(HOOKED, cancelled.id, reason="not needed", idempotency_key="cancel-1")
        wait_for(
            lambda: "run.cancelled" in {d["type"] for d in _documents(receiver.received)},
            "the cancellation told",
        )
    told = Counter((d["run_id"], d["type"]) for d in _documents(receiver.received))
    assert told[(str(cancelled.id), "run.cancelled")] == 1
