"""An evidence request's link in a real browser (headless Chromium) on a real server, with
no account: the page shows the request, its form sends a file into that request's
assessment and says so, a hostile file is refused in words and nothing is attributed, and
once the link is revoked the page says it takes no files."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.api.conftest import Api
from tests.console.browser import (
    Pages,
    console_browser,
    require_browser,
)
from tests.continuous.kit import issue_request

pytestmark = pytest.mark.browser

EVIDENCE = b"# Quarterly access review\n\nThe IAM lead reviewed all privileged accounts.\n"


def _send(pages: Pages, path: Path) -> None:
    pages.find("#file").send_keys(str(path))
    pages.button("Send").click()


def test_the_link_takes_files_into_its_request_in_a_browser(embedded: Path, tmp_path: Path) -> None:
    require_browser()
    with console_browser(embedded, "evidence-request") as pages:
        api = Api(httpx.Client(base_url=pages.base, timeout=30))  # type: ignore[arg-type]
        headers = api.key("signal", "read", tenant="requests-co")
        assessment = api.create_assessment(headers)["id"]
        other = api.create_assessment(headers, name="another assessment")["id"]
        issued = issue_request(api, headers, assessment)
        link, request_id = issued["link"], issued["request"]["id"]

        pages.open(link)  # no sign-in: the link is the only credential
        pages.wait_text("Evidence requested from it-ops@vendor.example")
        assert "SOC 2 CC6.1" in pages.text()
        assert "Send <b>last quarter's</b> access review export." in pages.text()
        assert pages.driver.execute_script("return document.querySelectorAll('b').length") == 0
        pages.shot("request-page")

        review = tmp_path / "access-review.md"
        review.write_bytes(EVIDENCE)
        _send(pages, review)
        pages.wait_text("Received access-review.md. Thank you.")
        assert "Files received so far: 1" in pages.text()
        pages.shot("received")
        pages.driver.refresh()  # the page after a redirect: a reload sends nothing again
        pages.wait_text("Files received so far: 1")

        hostile = tmp_path / "screenshot.md"
        hostile.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
        pages.open(link)
        pages.wait_text("Files received so far: 1")
        _send(pages, hostile)
        pages.wait_text("Not received")
        assert pages.find("#refusal").text
        pages.shot("hostile-refused")
        pages.link("Back to the request").click()
        pages.wait_text("Files received so far: 1")

        listed = api.client.get(
            f"/api/v1/assessments/{assessment}/evidence-requests", headers=headers
        ).json()
        (answered,) = listed
        assert answered["status"] == "answered" and len(answered["documents"]) == 1
        documents = api.client.get(
            f"/api/v1/assessments/{assessment}/documents", headers=headers
        ).json()
        assert [(d["id"], d["filename"]) for d in documents] == [
            (answered["documents"][0], "access-review.md")
        ]
        elsewhere = api.client.get(f"/api/v1/assessments/{other}/documents", headers=headers)
        assert elsewhere.json() == []

        revoked = api.client.post(f"/api/v1/evidence-requests/{request_id}/revoke", headers=headers)
        assert revoked.status_code == 200, revoked.text
        pages.open(link)
        pages.wait_text("This link takes no files")
        assert not pages.driver.find_elements("css selector", "form")
        pages.shot("revoked")
