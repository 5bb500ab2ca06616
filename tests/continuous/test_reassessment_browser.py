"""A reassessment in a real browser (headless Chromium) on a real server: after a new
version of a cited document, the SoA review page marks "changed since the approved
version" on exactly the rows the reassessment changed, offers a row approval on each of
them and on no other row; the reviewer approves them there, one by one, and the page
then marks none, with the version approved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import Api
from tests.console.browser import (
    Pages,
    console_browser,
    require_browser,
)
from tests.continuous.kit import POLICY, Reviewed, new_policy_version
from tests.support.http_lifecycle import through_soa_approval
from tests.support.polling import poll

pytestmark = pytest.mark.browser

TENANT = "reassess-co"


def _marked(pages: Pages) -> list[list[str]]:
    """The cells of each row the page marks changed."""
    return list(
        pages.driver.execute_script(
            "return [...document.querySelectorAll('li.row')]"
            ".filter(li => li.querySelector('.changed-mark'))"
            ".map(li => [...li.querySelectorAll('summary .cell')]"
            ".map(c => c.textContent.split(': ').slice(-1)[0].trim()))"
        )
    )


def _names(marked: list[list[str]], rows: list[dict[str, Any]]) -> set[str]:
    """The row names ("<framework> <requirement>") of the marked lines."""
    return {
        f"{row['framework']} {row['requirement_id']}"
        for row in rows
        for cells in marked
        if row["requirement_id"] in cells
    }


def test_the_changed_rows_are_marked_until_approved(embedded: Path) -> None:
    require_browser()
    with console_browser(embedded, "reassessment") as pages:
        api = Api(httpx.Client(base_url=pages.base, timeout=30))  # type: ignore[arg-type]
        assessed = Reviewed(api, TENANT, "reassess-browser")
        owner, reviewer_key = assessed.owner, assessed.reviewer
        assessment, run_id = assessed.assessment, assessed.run_id
        reviewer = "user:reviewer@acme"  # the principal of Reviewed's reviewer key
        through_soa_approval(api, owner, reviewer_key, run_id, assessed.decider, "SOC 2")

        documents = api.client.get(f"/api/v1/assessments/{assessment}/documents", headers=owner)
        policy = {d["filename"]: d["id"] for d in documents.json()}[POLICY]
        new_policy_version(api, owner, assessment, policy)
        listed = poll(
            lambda: api.client.get(
                f"/api/v1/assessments/{assessment}/reassessments", headers=owner
            ).json(),
            lambda found: len(found) == 1 and found[0]["status"] != "pending",
            timeout_s=120,
            what="the reassessment's evaluation",
        )
        found = listed[0]
        assert found["status"] == "awaiting_approval", found
        changed = {row["row"] for row in found["changed_rows"]}
        result = api.client.get(
            f"/api/v1/workflows/{run_id}/artifacts/{found['result_artifact_id']}", headers=owner
        ).json()
        rows = result["content"]["requirements"]

        pages.sign_in(reviewer_key["Authorization"].split()[-1])
        soa_page = f"/console/runs/{run_id}/artifacts/soa?size=200"
        pages.open(soa_page)
        pages.wait_text("changed since the approved version")
        marked = _marked(pages)
        assert len(marked) == len(changed), marked
        assert _names(marked, rows) == changed
        assert all(
            f"changed since the approved version (v{found['base_version']})" in item
            for item in pages.driver.execute_script(
                "return [...document.querySelectorAll('.changed-mark')].map(e => e.textContent)"
            )
        )
        pages.shot("changed-rows-marked")
        pages.find("li.row.changed").screenshot(str(pages.shots / "changed-row.png"))

        forms = pages.driver.execute_script(
            "return [...document.querySelectorAll('li.row form')]"
            ".map(f => f.querySelector('input[name=row]').value)"
        )
        assert set(forms) == changed and len(forms) == len(changed), forms
        for number, row in enumerate(sorted(changed), start=1):
            form = pages.find(f"form[aria-label='Approve the changed row {row}']")
            form.find_element("name", "comment").send_keys("read against the new version")
            pages.button("Approve this changed row", within=form).click()
            pages.wait_text(f"Changed row {row} approved")
            if number < len(changed):
                pages.wait_text(f"{len(changed) - number} changed row")
                assert f"Changed row approved by {reviewer}" in pages.text()
        pages.wait_text(f"soa v{found['result_version']} approved")
        pages.shot("rows-approved-in-the-console")
        approved = api.client.get(f"/api/v1/reassessments/{found['id']}", headers=owner).json()
        assert approved["status"] == "approved", approved
        assert {row["approved_by"] for row in approved["changed_rows"]} == {reviewer}
        pages.open(soa_page)
        pages.wait(lambda: pages.find("li.row"), "the SoA's rows")
        assert _marked(pages) == []
        assert "changed since the approved version" not in pages.text()
        assert "Approve this changed row" not in pages.text()
        pages.shot("approved-no-marker")
