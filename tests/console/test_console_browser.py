"""The console in a real browser (headless Chromium through chromedriver) against a real
uvicorn server on the embedded default: two reviewers take a lifecycle to completed
through the pages (with one rejection and one amendment), an operator retries a failed
step and resolves a dead letter, another tenant's URL shows the 404 page, a form posted
without its CSRF token is refused. Every page visited is saved as a screenshot with the
test results."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.service.dead_letters import get_dead_letter
from orchestrator.service.producer import Actor, get_run
from orchestrator.service.queries import list_approvals, list_steps
from tests.console.browser import (
    Pages,
    console_browser,
    require_browser,
    unlabelled_fields,
)
from tests.console.kit import SAMPLES, dead_lettered_run, key
from tests.support.roles import grant

pytestmark = pytest.mark.browser

TENANT = "browser-co"
OWNER = Actor(tenant_id=TENANT, actor_id="user:owner@browser.example")


def test_the_console_in_a_real_browser(embedded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_browser()
    owner_key = key("read", "signal", "operate", tenant=TENANT, principal=OWNER.actor_id)
    ana_key = key("read", "approve", tenant=TENANT, principal="user:ana@browser.example")
    bo_key = key("read", "approve", tenant=TENANT, principal="user:bo@browser.example")
    other_key = key("admin", tenant="other-co", principal="user:eve@other.example")
    grant(Actor(tenant_id=TENANT, actor_id="user:ana@browser.example"), "assessor")
    grant(Actor(tenant_id=TENANT, actor_id="user:bo@browser.example"), "ciso")
    failed, _ = dead_lettered_run(OWNER, monkeypatch, "Failed ingestion")
    lost, letter = dead_lettered_run(OWNER, monkeypatch, "Abandoned")

    with console_browser(embedded) as pages:
        _sign_in_and_keyboard(pages, owner_key)
        run_url = _start_a_run(pages)
        _review_to_completion(pages, run_url, owner_key, ana_key, bo_key)
        _operate(pages, owner_key, failed.id, lost.id, letter.id)
        _refusals(pages, other_key, owner_key, failed.id)
        (pages.shots / "index.txt").write_text("\n".join(pages.saved) + "\n")
    assert len(pages.saved) >= 15


def _sign_in_and_keyboard(pages: Pages, owner_key: str) -> None:
    from selenium.webdriver.common.keys import Keys

    pages.open("/console/queue")
    pages.wait_text("API key")
    assert "/console/login" in pages.driver.current_url
    pages.shot("sign-in")
    pages.fill("api_key", "lk_wrong.key")
    pages.button("Sign in").click()
    pages.wait_text("unknown or revoked")
    pages.shot("sign-in-refused")
    pages.sign_in(owner_key)
    pages.find("body").send_keys(Keys.TAB)
    focused = pages.driver.switch_to.active_element
    assert focused.text == "Skip to content", "the first Tab reaches the skip link"
    assert pages.driver.get_cookie("lifecycle_console")["httpOnly"] is True
    assert pages.driver.execute_script("return document.cookie").find("lifecycle") < 0
    pages.shot("queue-empty")


def _start_a_run(pages: Pages) -> str:
    pages.link("Assessments").click()
    pages.wait_text("New assessment")
    pages.fill("organization_id", "browser-org")
    pages.fill("name", "Browser Corp 2027 SCF assessment")
    pages.button("Create assessment").click()
    pages.wait_text("Upload documents")
    assert unlabelled_fields(pages) == []
    paths = "\n".join(str(p) for p in sorted(SAMPLES.iterdir()))
    pages.find("#files").send_keys(paths)
    pages.button("Upload").click()
    pages.wait_text("What became of each file")
    assert pages.text().count(" uploaded ") >= len(list(SAMPLES.iterdir()))
    pages.shot("documents-uploaded")
    pages.link("Back to the assessment").click()
    pages.wait_text("Start the lifecycle")
    pages.shot("assessment")
    pages.button("Start the lifecycle").click()
    pages.wait_text("What you can do")
    run_url = pages.driver.current_url.removeprefix(pages.base)
    # The page redraws itself while ingestion runs; the framework form appears in place.
    pages.wait(lambda: pages.find("#framework-form").is_displayed(), "the framework form")
    pages.shot("run-framework-wait")
    pages.find("input[name=frameworks][value='SOC 2']").click()
    pages.button("Select frameworks").click()
    # Applied at once, or still pending when the page answered on a busy machine.
    pages.wait_text("framework selected: ")
    assert "framework selected: rejected" not in pages.text()
    return run_url


def _moved_on(run_id: uuid.UUID, step: str | None, status: str) -> Callable[[], bool]:
    def check() -> bool:
        run = get_run(OWNER, run_id)
        return run.current_step != step or run.status != status

    return check


def _gate_of(step: str | None) -> str:
    gate = str(step).removeprefix("wait_for_").removesuffix("_approval")
    return {"gap": "gap_analysis", "maturity": "maturity_assessment"}.get(gate, gate)


def _review_to_completion(
    pages: Pages, run_url: str, owner_key: str, ana_key: str, bo_key: str
) -> None:
    """Ana approves the scope, decides the SoA's and the POA&M's rows in bulk (so bo, not
    she, approves those), and reviews the maturity and the report; bo rejects the gap
    analysis once, then approves its new version."""
    run_id = uuid.UUID(run_url.rsplit("/", 1)[1])
    reviewers = {
        "scope": ana_key,
        "soa": bo_key,
        "gap_analysis": bo_key,
        "maturity_assessment": ana_key,
        "poam": bo_key,
        "report": ana_key,
    }
    decided_in_bulk: set[str] = set()
    rejected = False
    who = owner_key
    while True:
        run = pages.wait(
            lambda: (
                (r := get_run(OWNER, run_id)).status
                in ("waiting_for_approval", "waiting_for_input", "completed")
                and r
            ),
            "the next wait",
        )
        if run.status == "completed":
            break
        gate = _gate_of(run.current_step)
        if run.status == "waiting_for_input":  # sent back: the operator asks for a new draft
            who = _sign_in_as(pages, who, owner_key)
            pages.open(run_url)
            pages.wait_text("Draft a new version")
            pages.shot("run-sent-back")
            pages.button("Draft a new version").click()
            pages.wait_text(f"new {gate} draft: ")
        elif gate == "soa" and not run.context.get("approved", {}).get("scope"):
            who = _sign_in_as(pages, who, ana_key)
            _decide(pages, "scope", run.context["artifacts"]["scope"], "approved")
            pages.wait(lambda: get_run(OWNER, run_id).context["approved"].get("scope"), "scope")
            continue
        elif gate in ("soa", "poam") and gate not in decided_in_bulk:
            who = _sign_in_as(pages, who, ana_key)
            decided_in_bulk.add(gate)
            _decide_rows_in_bulk(pages, run_url, run_id, gate, run.context["artifacts"][gate])
            continue  # the run waits at the gate, for the amended version if rows were open
        else:
            who = _sign_in_as(pages, who, reviewers[gate])
            decision = "rejected" if gate == "gap_analysis" and not rejected else "approved"
            rejected = rejected or decision == "rejected"
            _decide(pages, gate, run.context["artifacts"][gate], decision)
            if gate == "gap_analysis" and decision == "approved":
                pages.open(f"{run_url}/artifacts/gap_analysis?version=2")
                pages.wait_text("Changes since v1")
                pages.shot("review-gap_analysis-diff")
        pages.wait(_moved_on(run_id, run.current_step, run.status), "the run to move on")
    _sign_in_as(pages, who, owner_key)
    pages.open(run_url)
    pages.wait_text("close_assessment")
    pages.wait(lambda: pages.run_status() == "completed", "the completed status")
    pages.shot("run-completed")
    decided = [(a.artifact_kind, a.decision) for a in list_approvals(OWNER, run_id)]
    assert decided == [
        ("scope", "approved"),
        ("soa", "approved"),
        ("gap_analysis", "rejected"),
        ("gap_analysis", "approved"),
        ("maturity_assessment", "approved"),
        ("poam", "approved"),
        ("report", "approved"),
    ]
    pages.open(f"{run_url}/artifacts/report?version=1")
    pages.wait_text("The report as rendered")
    pages.shot("review-report-inline")


def _decide_rows_in_bulk(
    pages: Pages, run_url: str, run_id: uuid.UUID, gate: str, version: int
) -> None:
    """The undecided rows, filtered, set in one amendment: "every row matching the filter"
    (none is open when the owners set on the SoA reached the POA&M)."""
    slug = {"soa": "requirements", "poam": "items"}[gate]
    pages.open(f"{run_url}/artifacts/{gate}?version={version}&{slug}.undecided=1")
    pages.wait_text("Amend rows")
    if pages.find("#undecided-count").text.startswith("0 of"):
        return
    pages.find("#amend > summary").click()
    pages.find("#amend input[name=target][value=filter]").click()
    if gate == "soa":
        pages.find("#amend-implementation_status option[value=implemented]").click()
    pages.fill("amend-owner", "Head of IT")
    pages.fill("amend-reason", "decided in the review meeting")
    pages.shot(f"review-{gate}-bulk-amend")
    pages.button("Amend and draft the next version").click()
    pages.wait_text(f"{gate} v{version + 1} drafted from v{version}: every row matching")
    pages.wait(
        lambda: get_run(OWNER, run_id).context["artifacts"].get(gate) == version + 1,
        f"the run to wait for the amended {gate}",
    )


def _sign_in_as(pages: Pages, current: str, wanted: str) -> str:
    if current != wanted:
        pages.sign_in(wanted)
    return wanted


def _decide(pages: Pages, gate: str, version: int, decision: str) -> None:
    """From the queue to the review page, then one decision through its form."""
    pages.open("/console/queue")
    pages.wait_text("waiting for you, oldest first")
    if gate == "soa":
        pages.shot("queue-with-soa")
    pages.link(f"Review {gate.replace('_', ' ')} v{version}").click()
    pages.wait_text("Decide")
    pages.find("#decide > summary").click()
    assert unlabelled_fields(pages) == []
    pages.find(f"input[name=decision][value={decision}]").click()
    if decision == "rejected":
        pages.fill("comment", "Cite the business continuity plan for BCD-01")
    pages.shot(f"review-{gate}-v{version}")
    pages.button("Record decision").click()
    pages.wait_text(f"{gate} v{version} {decision}: ")
    fates = ("recorded",) if decision == "rejected" else ("applied", "pending")
    assert any(f"{decision}: {fate}" in pages.text() for fate in fates)


def _operate(
    pages: Pages, owner_key: str, failed_id: uuid.UUID, lost_id: uuid.UUID, letter_id: int
) -> None:
    pages.open("/console/ops")
    pages.wait_text("Runs by status and step")
    pages.shot("ops-runs-by-status")
    pages.open("/console/ops/stuck")
    pages.wait_text("Stuck runs")
    pages.shot("ops-stuck")

    pages.open(f"/console/runs/{failed_id}")
    pages.wait_text("Retry the failed step")
    pages.shot("run-failed")
    pages.fill("retry-reason", "the ingestion worker is back")
    pages.find("input[name=confirm]").click()
    pages.button("Retry the failed step").click()
    pages.wait_text("retry: ")
    pages.wait(
        lambda: get_run(OWNER, failed_id).status == "waiting_for_input",
        "the retried ingestion to finish",
    )
    assert [
        (s.attempt, s.status) for s in list_steps(OWNER, failed_id) if s.step == "ingest_documents"
    ] == [(1, "failed"), (2, "completed")]

    pages.open("/console/ops/dead-letters")
    pages.wait_text(f"#{letter_id} ingest_documents")
    pages.shot("ops-dead-letters")
    article = pages.find(f"article[aria-labelledby=letter-{letter_id}]")
    article.find_element("css selector", f"#resolve-{letter_id}").send_keys("assessment abandoned")
    form = article.find_element("css selector", "form[action$='/resolve']")
    form.find_element("css selector", "input[name=confirm]").click()
    pages.button(f"Resolve #{letter_id}", within=form).click()
    pages.wait_text(f"dead letter {letter_id} resolved")
    assert get_dead_letter(letter_id).resolved_by == OWNER.actor_id
    assert get_run(OWNER, lost_id).status == "failed", "resolving does not retry"
    pages.shot("ops-dead-letter-resolved")


def _refusals(pages: Pages, other_key: str, owner_key: str, run_id: uuid.UUID) -> None:
    pages.sign_in(other_key)
    pages.open(f"/console/runs/{run_id}")
    pages.wait_text("Not found")
    assert pages.find("h1").text == "Not found"
    pages.shot("cross-tenant-404")

    pages.sign_in(owner_key)
    pages.open("/console/assessments")
    pages.wait_text("New assessment")
    pages.driver.execute_script(
        "document.querySelectorAll('input[name=csrf_token]').forEach(e => e.remove())"
    )
    pages.fill("organization_id", "browser-org")
    pages.fill("name", "Forged assessment")
    pages.button("Create assessment").click()
    pages.wait_text("Form refused")
    pages.shot("csrf-refused")
    pages.open("/console/assessments")
    pages.wait_text("All assessments")
    assert "Forged assessment" not in pages.text()
