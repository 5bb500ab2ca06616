"""An evidence request end to end in a real browser (headless Chromium) on a real server:
an operator creates the assessment and issues the request through the console's forms and
reads the link the page shows once (a reload of that page issues nothing more); the
outsider, with no account and no console cookie, opens the link and sends a file through
its form; the operator's console then lists the file as received through that request,
and its name opens the document's judgement."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from orchestrator.contracts.identity import Actor
from orchestrator.service.evidence_requests import list_requests
from orchestrator.service.queries import list_assessments
from tests.console.browser import (
    Pages,
    console_browser,
    require_browser,
    unlabelled_fields,
)
from tests.console.kit import key

pytestmark = pytest.mark.browser

TENANT = "request-browser-co"
OPERATOR = Actor(tenant_id=TENANT, actor_id="user:op@request-browser.example")
RECIPIENT = "it-ops@vendor.example"
EVIDENCE = b"# Quarterly access review\n\nThe IAM lead reviewed all privileged accounts.\n"


def _set(pages: Pages, field_id: str, value: str) -> None:
    """A date or date-time field, set as its value (typing into one depends on the locale)."""
    pages.driver.execute_script(
        "arguments[0].value = arguments[1]", pages.find(f"#{field_id}"), value
    )


def test_an_operator_issues_a_request_the_outsider_answers_and_the_console_shows_it(
    embedded: Path, tmp_path: Path
) -> None:
    require_browser()
    operator_key = key("read", "signal", tenant=TENANT, principal=OPERATOR.actor_id)
    evidence = tmp_path / "access-review.md"
    evidence.write_bytes(EVIDENCE)

    with console_browser(embedded, "evidence-request-console") as pages:
        pages.sign_in(operator_key)

        pages.open("/console/assessments")
        pages.fill("organization_id", "vendor-org")
        pages.fill("name", "Vendor evidence 2027")
        pages.button("Create assessment").click()
        pages.wait_text("Request evidence from someone outside")
        pages.link("Request evidence from someone outside").click()
        pages.wait_text("No evidence requests yet")
        assert unlabelled_fields(pages) == []
        pages.fill("recipient", RECIPIENT)
        pages.fill("requirements", "SOC 2 CC6.1\nSOC 2 CC6.2")
        pages.fill("instructions", "The access review of last quarter, signed.")
        _set(pages, "due_on", (date.today() + timedelta(days=7)).isoformat())
        pages.shot("request-form")
        pages.button("Issue the request").click()
        pages.wait_text(f"Request issued to {RECIPIENT}")
        link = str(pages.find("#issued-link").get_attribute("value"))
        assert link.startswith(f"{pages.base}/w/evidence/"), link
        pages.shot("request-issued")
        # A reload of the page showing the link posts the form again: it issues nothing.
        pages.driver.refresh()
        pages.wait_text("This form was sent before")
        assert "Nothing new was issued" in pages.text()
        assert not pages.driver.find_elements("css selector", "#issued-link"), "the link shown once"
        pages.shot("reloaded")

        (assessment,) = list_assessments(OPERATOR, limit=5).items
        (request,) = list_requests(OPERATOR, assessment.id)
        assert (request.recipient, request.requirements, request.status) == (
            RECIPIENT,
            ["SOC 2 CC6.1", "SOC 2 CC6.2"],
            "open",
        )
        assert request.created_by == OPERATOR.actor_id

        # The outsider: no console cookie, only the link.
        pages.driver.delete_all_cookies()
        pages.open(link.removeprefix(pages.base))
        pages.wait_text(f"Evidence requested from {RECIPIENT}")
        assert "SOC 2 CC6.1" in pages.text() and "Sign out" not in pages.text()
        pages.find("#file").send_keys(str(evidence))
        pages.button("Send").click()
        pages.wait_text("Received access-review.md. Thank you.")
        assert "Files received so far: 1" in pages.text()
        pages.shot("outsider-sent")

        # The operator again: the request lists what arrived through its link.
        pages.sign_in(operator_key)
        pages.open(f"/console/assessments/{assessment.id}/evidence-requests")
        pages.wait_text("access-review.md")
        row = pages.find(f"#request-{request.id}")
        assert "access-review.md" in row.text and "answered" in row.text, row.text
        assert "nothing yet" not in row.text
        pages.shot("request-answered")
        (answered,) = list_requests(OPERATOR, assessment.id)
        assert answered.status == "answered" and len(answered.documents) == 1

        pages.link("access-review.md").click()
        pages.wait(
            lambda: f"/documents/{answered.documents[0]}/judgement" in pages.driver.current_url,
            "the document's judgement page",
        )
        pages.wait_text("access-review.md")
        pages.shot("document-judgement")
