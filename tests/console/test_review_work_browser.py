"""Review work in a real browser (headless Chromium) on a real server: a run started from
the console reaches its framework form while the page stays loaded; two frameworks and a
SOC 2 category are chosen in the searchable picker; the 347-row SoA that follows is paged
and filtered on the server; a claim is seen by another reviewer and lapses; comments on
the draft and on a row come back in the next version's diff beside the amended fields
(who and why); the amender is told the draft needs another reviewer, and who can decide;
a database held busy during a decision and an approval of undecided rows are pages in the
console's style, as is an address that does not exist."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.service.producer import Actor, get_run
from orchestrator.service.queries import get_artifact, list_artifacts, list_audit
from orchestrator.service.readiness import artifact_readiness
from orchestrator.service.review_claims import release_lapsed_claims
from tests.console.browser import (
    Pages,
    console_browser,
    require_browser,
    unlabelled_fields,
)
from tests.console.kit import SAMPLES, key
from tests.support.polling import scaled
from tests.support.roles import grant

pytestmark = pytest.mark.browser

TENANT = "review-co"
OWNER = Actor(tenant_id=TENANT, actor_id="user:owner@review.example")
ANA = Actor(tenant_id=TENANT, actor_id="user:ana@review.example")
BO = Actor(tenant_id=TENANT, actor_id="user:bo@review.example")
FRAMEWORKS = ("NIST SP 800-53 rev5 Moderate", "SOC 2")
CLAIM_TTL_S = scaled(6)


def test_review_work_on_a_large_soa(embedded_sqlite: Path) -> None:
    embedded = embedded_sqlite  # the busy page is SQLite's file lock held
    require_browser()
    keys = {
        "owner": key("read", "signal", "operate", tenant=TENANT, principal=OWNER.actor_id),
        "ana": key("read", "approve", tenant=TENANT, principal=ANA.actor_id),
        "bo": key("read", "approve", tenant=TENANT, principal=BO.actor_id),
    }
    grant(ANA, "assessor")
    grant(BO, "ciso")
    settings = {
        "LIFECYCLE_CONSOLE_CLAIM_TTL_S": str(CLAIM_TTL_S),
        "LIFECYCLE_DATABASE_BUSY_TIMEOUT_S": "2",
    }
    with console_browser(embedded, "review-work", settings) as pages:
        run_id = _start_and_choose_frameworks(pages, keys["owner"])
        _claim_seen_by_another_and_lapsed(pages, run_id, keys)
        _paged_and_filtered(pages, run_id, keys["ana"])
        _discussed_then_amended(pages, run_id)
        _needs_another_reviewer(pages, run_id)
        _failures_are_pages(pages, run_id, keys["bo"], embedded / "lifecycle.db")
        (pages.shots / "index.txt").write_text("\n".join(pages.saved) + "\n")


def _soa_url(run_id: uuid.UUID, query: str = "") -> str:
    return f"/console/runs/{run_id}/artifacts/soa" + (f"?{query}" if query else "")


def _visible_frameworks(pages: Pages) -> list[str]:
    return list(
        pages.driver.execute_script(
            "return [...document.querySelectorAll('#fw-list li[data-words]')]"
            ".filter(li => !li.hidden).map(li => li.querySelector('input').value)"
        )
    )


def _start_and_choose_frameworks(pages: Pages, owner_key: str) -> uuid.UUID:
    """The run page redraws itself from "running" to the framework form, no reload."""
    pages.sign_in(owner_key)
    pages.open("/console/assessments")
    pages.fill("organization_id", "review-org")
    pages.fill("name", "Review Co 2027 NIST and SOC 2")
    pages.button("Create assessment").click()
    pages.wait_text("Upload documents")
    pages.find("#files").send_keys(str(sorted(SAMPLES.iterdir())[0]))
    pages.button("Upload").click()
    pages.wait_text("What became of each file")
    pages.link("Back to the assessment").click()
    pages.button("Start the lifecycle").click()
    pages.wait_text("What you can do")
    run_url = pages.driver.current_url
    pages.driver.execute_script("window.loadedOnce = 'the same document'")
    pages.wait(lambda: pages.find("#framework-form").is_displayed(), "the framework form")
    assert pages.driver.execute_script("return window.loadedOnce") == "the same document"
    assert pages.driver.current_url == run_url, "the form came to the page, not a new page"
    assert "wait_for_framework_selection" in pages.find("#live-steps tr.current").text
    assert "1 of 1 finished: 1 ingested" in pages.find("#run-progress").text
    assert (
        pages.driver.execute_script(
            "return document.querySelectorAll('#fw-list input:checked:not([disabled])').length"
        )
        == 0
    ), "no framework is chosen in advance"
    assert unlabelled_fields(pages) == []
    pages.fill("fw-search", "800-53 rev5 moderate")
    shown = _visible_frameworks(pages)
    assert FRAMEWORKS[0] in shown and "SOC 2" not in shown
    assert all("800-53" in name for name in shown)
    pages.find(f"input[name=frameworks][value='{FRAMEWORKS[0]}']").click()
    pages.fill("fw-search", "soc 2")
    pages.find("input[name=frameworks][value='SOC 2']").click()
    pages.find("input[name=categories][value='SOC 2|availability']").click()
    pages.shot("framework-picker")
    pages.button("Select frameworks").click()
    pages.wait_text("framework selected: ")
    run_id = uuid.UUID(run_url.rsplit("/", 1)[1])
    pages.wait(lambda: pages.run_status() == "waiting for approval", "the SoA wait", 120)
    assert get_run(OWNER, run_id).context["frameworks"] == list(FRAMEWORKS)
    assert get_run(OWNER, run_id).context["categories"] == {"SOC 2": ["availability"]}
    return run_id


def _claim_seen_by_another_and_lapsed(
    pages: Pages, run_id: uuid.UUID, keys: dict[str, str]
) -> None:
    pages.sign_in(keys["ana"])
    pages.open(_soa_url(run_id))
    pages.button("Claim this review").click()
    pages.wait_text("You claimed this review until")
    assert "claimed by you until" in pages.find("#claim-state").text
    pages.sign_in(keys["bo"])
    pages.open("/console/queue")
    assert f"claimed by {ANA.actor_id} until" in pages.text()
    pages.shot("queue-claimed-by-another")
    pages.open(_soa_url(run_id))
    assert f"claimed by {ANA.actor_id}" in pages.find("#claim-state").text

    def lapsed() -> bool:
        pages.open("/console/queue")
        return f"claimed by {ANA.actor_id}" not in pages.text()

    pages.wait(lapsed, "the claim to lapse", CLAIM_TTL_S + 60)
    assert pages.button("Claim").is_displayed(), "free to claim again"
    assert release_lapsed_claims() == 1, "the sweep frees the lapsed claim once"
    assert release_lapsed_claims() == 0
    lapses = [
        e.metadata
        for e in list_audit(OWNER, run_id, limit=200).items
        if e.event_type == "lifecycle_workflow_review_claim_lapsed"
    ]
    assert [(m["artifact_kind"], m["claimed_by"]) for m in lapses] == [("soa", ANA.actor_id)]


def _soa_rows(run_id: uuid.UUID, version: int = 1) -> list[dict[str, Any]]:
    [draft] = [a for a in list_artifacts(OWNER, run_id, "soa") if a.version == version]
    return list(get_artifact(OWNER, run_id, draft.id).content["requirements"])


def _shown_keys(pages: Pages) -> list[str]:
    return list(
        pages.driver.execute_script(
            "return [...document.querySelectorAll('#table-requirements input[name=rows]')]"
            ".map(e => e.value)"
        )
    )


def _paged_and_filtered(pages: Pages, run_id: uuid.UUID, ana_key: str) -> None:
    rows = _soa_rows(run_id)
    assert len(rows) >= 300
    pages.sign_in(ana_key)
    pages.open(_soa_url(run_id))
    assert f"Rows 1–50 of {len(rows)}" in pages.find("#requirements-shown").text
    assert _shown_keys(pages) == [r["requirement_id"] for r in rows[:50]]
    assert pages.driver.execute_script("return document.body.scrollHeight") < 9000
    assert unlabelled_fields(pages) == [], "filters, ticks and forms all have labels"
    pages.shot("soa-page-1")
    pages.link("Next").click()
    pages.wait_text(f"Rows 51–100 of {len(rows)}")
    assert _shown_keys(pages) == [r["requirement_id"] for r in rows[50:100]]
    assert f"Page 2 of {-(-len(rows) // 50)}" in pages.text()

    pages.find("#requirements-framework option[value='SOC 2']").click()
    pages.fill("requirements-q", "CC6")
    pages.find("#table-requirements form.filters button[type=submit]").click()
    expected = [
        r["requirement_id"]
        for r in rows
        if r["framework"] == "SOC 2"
        and "cc6" in f"{r['requirement_id']} {r['title']} {r['justification']}".lower()
    ]
    pages.wait_text(f"Rows 1–{len(expected)} of {len(expected)}")
    assert sorted(_shown_keys(pages)) == sorted(expected)
    pages.link("Requirement").click()  # sort by the heading: ascending, then descending
    pages.wait(lambda: "▲" in pages.find(".line.head").text, "the ascending sort")
    pages.link("Requirement").click()
    pages.wait(lambda: "▼" in pages.find(".line.head").text, "the descending sort")
    shown = _shown_keys(pages)
    assert shown == sorted(expected, key=_natural, reverse=True)
    pages.shot("soa-filtered-sorted")


def _natural(name: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in name.replace(".", " . ").split()]


def _discussed_then_amended(pages: Pages, run_id: uuid.UUID) -> None:
    """Two comments on v1 (the draft, a row), then two rows amended: the v2 diff shows the
    fields changed, who amended and why, and what was said on v1."""
    filtered = _soa_url(run_id, "version=1&requirements.framework=SOC+2&requirements.q=CC6")
    pages.open(filtered)
    pages.fill("comment-draft", "Confirm the owners of CC6 before approving")
    pages.button("Add comment").click()
    pages.wait_text("Comment added on soa v1")
    first, second = _shown_keys(pages)[:2]
    pages.find(f"#table-requirements li:has(input[value='{first}']) summary").click()
    pages.link(f"Open {first} on its own page").click()
    pages.wait_text(f"Discussion of {first}")
    pages.fill("comment-row", "The IT department runs this; Head of IT owns it")
    pages.button("Add comment").click()
    pages.wait_text(f"Comment added on row {first}")
    pages.shot("row-page-commented")

    pages.open(filtered)
    for name in (first, second):
        pages.find(f"input[name=rows][value='{name}']").click()
    pages.find("#amend > summary").click()
    pages.find("#amend-implementation_status option[value=implemented]").click()
    pages.fill("amend-owner", "Head of IT")
    pages.fill("amend-reason", "confirmed at the kick-off")
    pages.shot("soa-amend-two-rows")
    pages.button("Amend and draft the next version").click()
    pages.wait_text("soa v2 drafted from v1: 2 rows amended")
    diff = pages.find("#changes").text
    for name in (first, second):
        assert f"{name} changed Implementation" in diff
    assert "Implementation – implemented" in diff and "Owner – Head of IT" in diff
    assert f"{ANA.actor_id}: “confirmed at the kick-off”" in diff
    assert "Said on v1:" in diff and "Head of IT owns it" in diff
    assert "Discussed on v1" in diff and "Confirm the owners of CC6" in diff
    pages.shot("soa-v2-diff")


def _needs_another_reviewer(pages: Pages, run_id: uuid.UUID) -> None:
    def barred() -> bool:
        pages.open(_soa_url(run_id, "version=2"))
        return "Needs another reviewer." in pages.text()

    pages.wait(barred, "the run to wait for v2")
    said = pages.find("#barred").text
    assert "you amended this version of the soa, so another reviewer must decide it" in said
    assert f"Who can: {BO.actor_id} (ciso)" in said
    assert "Record decision" not in pages.text()
    pages.shot("soa-v2-needs-another-reviewer")
    pages.open("/console/queue")
    assert "Needs another reviewer" in pages.text()
    row = pages.find("tr.needs-another").text
    assert "soa" in row and "v2" in row and "needs another reviewer" in row and BO.actor_id in row
    pages.shot("queue-needs-another-reviewer")


@contextmanager
def _write_lock(database: Path) -> Iterator[None]:
    """Another writer holding SQLite's one write lock (a job's long transaction)."""
    holder = sqlite3.connect(database, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def _approve_from_the_bar(pages: Pages) -> None:
    pages.find("#decide > summary").click()
    pages.find("input[name=decision][value=approved]").click()


def _failures_are_pages(pages: Pages, run_id: uuid.UUID, bo_key: str, database: Path) -> None:
    pages.sign_in(bo_key)
    pages.open(_soa_url(run_id, "version=2"))
    _approve_from_the_bar(pages)
    with _write_lock(database):
        pages.button("Record decision").click()
        pages.wait_text("Database busy")
    assert pages.find("h1").text == "Database busy"
    assert "may or may not have been applied" in pages.text()
    assert pages.link("Check the run page").get_attribute("href").endswith(f"/runs/{run_id}")
    assert not pages.driver.page_source.lstrip().startswith("{")
    pages.shot("error-database-busy")

    pages.open(_soa_url(run_id, "version=2"))
    _approve_from_the_bar(pages)
    pages.button("Record decision").click()
    pages.wait_text("Not ready to approve")
    undecided = artifact_readiness(OWNER, run_id, _draft_id(run_id, 2)).undecided
    assert f"soa version 2 has {len(undecided)} of" in pages.text()
    pages.shot("error-not-ready")
    pages.link("Show the undecided rows").click()
    pages.wait_text(f"of {len(undecided)}")
    assert set(_shown_keys(pages)) <= set(undecided)

    pages.open("/console/no-such-page")
    pages.wait_text("Not found")
    assert pages.find("h1").text == "Not found"
    assert "There is no such page in the console." in pages.text()
    pages.shot("error-unknown-address")


def _draft_id(run_id: uuid.UUID, version: int) -> uuid.UUID:
    kind = ArtifactKind.SOA.value
    return next(a.id for a in list_artifacts(OWNER, run_id, kind) if a.version == version)
