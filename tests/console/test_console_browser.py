"""The console in a real browser (headless Chromium through chromedriver) against a real
uvicorn server on the embedded default: two reviewers take a lifecycle to completed
through the pages (with one rejection and one amendment), an operator retries a failed
step and resolves a dead letter, another tenant's URL shows the 404 page, a form posted
without its CSRF token is refused. Every page visited is saved as a screenshot with the
test results."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.service.dead_letters import get_dead_letter
from orchestrator.service.producer import Actor, get_run
from orchestrator.service.queries import list_approvals, list_steps
from tests.console.browser import artifacts_dir, chromium_driver, require_browser, uvicorn_server
from tests.console.kit import SAMPLES, dead_lettered_run, key
from tests.support.roles import grant

pytestmark = pytest.mark.browser

TENANT = "browser-co"
OWNER = Actor(tenant_id=TENANT, actor_id="user:owner@browser.example")


class Pages:
    """One browser on the console: navigation, forms by their labels, screenshots."""

    def __init__(self, driver: Any, base: str, shots: Path) -> None:
        self.driver, self.base, self.shots = driver, base, shots
        self.saved: list[str] = []

    def open(self, path: str) -> None:
        self.driver.get(self.base + path)

    def find(self, css: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, css)

    def button(self, label: str, within: Any = None) -> Any:
        from selenium.webdriver.common.by import By

        return (within or self.driver).find_element(
            By.XPATH, f".//button[normalize-space()='{label}']"
        )

    def link(self, label: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.PARTIAL_LINK_TEXT, label)

    def fill(self, label_for: str, value: str) -> None:
        field = self.find(f"#{label_for}")
        field.clear()
        field.send_keys(value)

    def text(self) -> str:
        return str(self.find("body").text)

    def wait(self, condition: Callable[[], Any], what: str, timeout_s: float = 90) -> Any:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                value = condition()
            except Exception:  # noqa: BLE001 - a page mid-load: look again
                value = None
            if value:
                return value
            assert time.monotonic() < deadline, (
                f"timed out waiting for {what}; page: {self.text()[:1500]}"
            )
            time.sleep(0.1)

    def wait_text(self, needle: str, timeout_s: float = 90) -> None:
        self.wait(lambda: needle in self.text(), repr(needle), timeout_s)

    def shot(self, name: str) -> None:
        """The whole page, at a laptop's width."""
        height = self.driver.execute_script("return Math.max(document.body.scrollHeight, 900)")
        self.driver.set_window_size(1366, min(int(height) + 120, 6000))
        path = self.shots / f"{len(self.saved) + 1:02d}-{name}.png"
        self.driver.save_screenshot(str(path))
        self.driver.set_window_size(1366, 900)
        self.saved.append(path.name)

    def sign_in(self, api_key: str) -> None:
        self.open("/console/login")
        if "Sign out" in self.text():
            self.button("Sign out").click()
            self.wait_text("API key")
        self.fill("api_key", api_key)
        self.button("Sign in").click()
        self.wait_text("My queue")

    def run_status(self) -> str:
        return str(self.find("#run-status").text)


def _unlabelled_fields(pages: Pages) -> list[str]:
    """Every visible form field must have a label (screen readers read it)."""
    return list(
        pages.driver.execute_script("""
        return Array.from(document.querySelectorAll('input, select, textarea'))
          .filter(e => e.type !== 'hidden' && !e.closest('label')
                  && !(e.id && document.querySelector('label[for="' + e.id + '"]'))
                  && !e.getAttribute('aria-label'))
          .map(e => e.name);""")
    )


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

    with uvicorn_server(embedded) as base, chromium_driver() as driver:
        pages = Pages(driver, base, artifacts_dir())
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
    assert _unlabelled_fields(pages) == []
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
    # The page updates itself (polling) while ingestion runs, then offers a reload.
    pages.wait(lambda: pages.run_status() == "waiting for input", "the framework wait")
    if pages.find("#live .changed").is_displayed():  # the run moved after the page loaded
        pages.link("The run has moved on").click()
    else:
        pages.driver.refresh()
    pages.wait_text("Select framework")
    pages.shot("run-framework-wait")
    pages.button("Select framework").click()
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
    run_id = uuid.UUID(run_url.rsplit("/", 1)[1])
    reviewers = {
        "soa": ana_key,
        "gap_analysis": bo_key,
        "maturity_assessment": ana_key,
        "poam": bo_key,
        "report": ana_key,
    }
    rejected = amended = False
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
        elif gate == "soa" and not amended:  # ana amends a row: bo approves the next version
            who = _sign_in_as(pages, who, ana_key)
            _amend_a_row(pages, run_url, run_id)
            amended, reviewers["soa"] = True, bo_key
            continue  # the run still waits at the SoA gate, now for v2
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


def _amend_a_row(pages: Pages, run_url: str, run_id: uuid.UUID) -> None:
    pages.open(f"{run_url}/artifacts/soa")
    pages.wait_text("Amend a row")
    pages.fill("amend-owner", "Head of IT")
    pages.fill("amend-reason", "the owner named in the kick-off")
    pages.shot("review-soa-amend")
    pages.button("Amend and draft the next version").click()
    pages.wait_text("soa v2 drafted from v1")
    pages.wait(
        lambda: get_run(OWNER, run_id).context["artifacts"].get("soa") == 2,
        "the run to wait for the amended SoA",
    )


def _sign_in_as(pages: Pages, current: str, wanted: str) -> str:
    if current != wanted:
        pages.sign_in(wanted)
    return wanted


def _decide(pages: Pages, gate: str, version: int, decision: str) -> None:
    """From the queue to the review page, then one decision through its form."""
    pages.open("/console/queue")
    pages.wait_text("1 waiting for you, oldest first")
    if gate == "soa":
        pages.shot("queue-with-soa")
    pages.link(f"Review {gate.replace('_', ' ')} v{version}").click()
    pages.wait_text("Your decision")
    assert _unlabelled_fields(pages) == []
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
