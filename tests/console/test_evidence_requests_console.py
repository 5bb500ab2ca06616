"""Evidence requests in the console: a reviewer issues one (its link shown once), lists
them, sees what arrived through the link, revokes one; the same scopes and tenancy as
the API, and a bad field is a 422 page naming it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from orchestrator.api import app
from orchestrator.service.document_judgements import document_judgement
from orchestrator.service.evidence_requests import list_requests
from orchestrator.service.producer import Actor, create_assessment
from tests.console.kit import Browser, form_key, key, text, token
from tests.support.embedded import api_on_postgres

OWNER = Actor(tenant_id="acme", actor_id="user:ana@acme")
EVIDENCE = b"# Quarterly access review\n\nThe IAM lead reviewed all privileged accounts.\n"
_LINK = re.compile(r'id="issued-link" readonly size="80" value="([^"]+)"')


def _signed_in(client: TestClient, *scopes: str, tenant: str = "acme") -> Browser:
    browser = Browser(client)
    assert browser.sign_in(key(*scopes, tenant=tenant)).status_code == 303
    return browser


def _form(**changes: str) -> dict[str, str]:
    return {
        "recipient": "it-ops@vendor.example",
        "requirements": "SOC2 CC6.1\n\n  ISO27001 A.5.15  \n",
        "instructions": "The access review of last quarter, signed.",
        "due_on": (date.today() + timedelta(days=7)).isoformat(),
        "link_expires_at": "",
        **changes,
    }


def test_a_reviewer_issues_lists_sees_what_arrived_and_revokes(client: TestClient) -> None:
    assessment = create_assessment(OWNER, "acme-org", "Vendor evidence")
    browser = _signed_in(client, "read", "signal")
    page_url = f"/console/assessments/{assessment.id}/evidence-requests"
    assert page_url in browser.get(f"/console/assessments/{assessment.id}").text
    empty = browser.get(page_url)
    assert empty.status_code == 200 and "No evidence requests yet" in text(empty)

    issued = browser.post(page_url, _form(), from_page=page_url)
    assert issued.status_code == 201, text(issued)
    found = _LINK.search(issued.text)
    assert found, "the page shows the link"
    link = found.group(1)
    assert link.startswith("http://testserver/w/evidence/")
    (request,) = list_requests(OWNER, assessment.id)
    assert request.requirements == ["SOC2 CC6.1", "ISO27001 A.5.15"]
    assert request.recipient == "it-ops@vendor.example" and request.status == "open"
    assert request.created_by == "user:ana@acme"
    listed = browser.get(page_url)
    assert "it-ops@vendor.example" in text(listed) and "nothing yet" in text(listed)
    assert link.removeprefix("http://testserver") not in listed.text, "shown once"

    sent = client.post(
        link.removeprefix("http://testserver"),
        files={"file": ("access-review.md", EVIDENCE, "text/markdown")},
    )
    assert sent.status_code == 201, sent.text
    arrived = browser.get(page_url)
    assert "access-review.md" in text(arrived) and "answered" in text(arrived)
    (answered,) = list_requests(OWNER, assessment.id)
    judgement = f"/console/assessments/{assessment.id}/documents/{answered.documents[0]}/judgement"
    assert judgement in arrived.text

    revoked = browser.post(
        f"/console/evidence-requests/{request.id}/revoke", {}, from_page=page_url
    )
    assert revoked.status_code == 303
    after = browser.get(revoked.headers["location"])
    assert "is revoked" in text(after) and "Revoke the link" not in text(after)
    assert list_requests(OWNER, assessment.id)[0].status == "revoked"
    refused = client.post(
        link.removeprefix("http://testserver"),
        files={"file": ("late.md", b"# Late\n\nAnother file.\n", "text/markdown")},
    )
    assert refused.status_code == 410
    assert len(list_requests(OWNER, assessment.id)[0].documents) == 1


def test_the_same_form_sent_twice_issues_one_request(client: TestClient) -> None:
    """A reload of the page showing the link sends the form again: the second answer is a
    303 to the request issued the first time, and nothing more is issued."""
    assessment = create_assessment(OWNER, "acme-org", "Vendor evidence")
    browser = _signed_in(client, "read", "signal")
    url = f"/console/assessments/{assessment.id}/evidence-requests"
    page = browser.get(url).text
    minted = form_key(page, url)
    assert minted, "the form carries a key minted with the page"
    sent = {"csrf_token": token(page), "key": minted, **_form()}

    first = client.post(url, data=sent, follow_redirects=False)
    assert first.status_code == 201, text(first)
    assert _LINK.search(first.text)
    again = client.post(url, data=sent, follow_redirects=False)
    assert again.status_code == 303, text(again)
    (request,) = list_requests(OWNER, assessment.id)
    location = again.headers["location"]
    assert location.startswith(url) and location.endswith(f"#request-{request.id}")
    shown = browser.get(location)
    assert "This form was sent before" in text(shown) and "Nothing new was issued" in text(shown)
    assert not _LINK.search(shown.text), "the link is shown once, not on the replay"

    changed = client.post(
        url, data={**sent, "recipient": "someone-else@vendor.example"}, follow_redirects=False
    )
    assert changed.status_code == 409 and "sent before with other values" in text(changed)
    fresh = browser.post(url, _form(), from_page=url)  # a new rendering: a new key
    assert fresh.status_code == 201
    assert len(list_requests(OWNER, assessment.id)) == 2


def test_bad_fields_are_pages_naming_them_and_nothing_is_issued(client: TestClient) -> None:
    assessment = create_assessment(OWNER, "acme-org", "Vendor evidence")
    browser = _signed_in(client, "read", "signal")
    url = f"/console/assessments/{assessment.id}/evidence-requests"
    past = (date.today() - timedelta(days=1)).isoformat()
    cases = {
        "due date": _form(due_on=past),
        "not a date": _form(due_on="next week"),
        "no requirement": _form(requirements="\n \n"),
        "a long requirement": _form(requirements="SOC2 " + "x" * 300),
        "blank recipient": _form(recipient="   "),
        "long instructions": _form(instructions="x" * 4001),
    }
    said = {}
    for name, form in cases.items():
        response = browser.post(url, form, from_page=url)
        assert response.status_code == 422, (name, response.status_code)
        assert response.headers["content-type"].startswith("text/html")
        said[name] = text(response)
    assert "has passed" in said["due date"]
    assert "due on" in said["not a date"]
    assert "at most 300 characters" in said["a long requirement"]
    assert "instructions is too long: at most 4000" in said["long instructions"]
    assert list_requests(OWNER, assessment.id) == []


def test_scopes_and_tenancy_are_the_apis(client: TestClient) -> None:
    assessment = create_assessment(OWNER, "acme-org", "Vendor evidence")
    url = f"/console/assessments/{assessment.id}/evidence-requests"
    reader = _signed_in(client, "read")
    page = reader.get(url)
    assert page.status_code == 200 and "Issue the request" not in page.text
    unseen = {**_form(), "key": "k" * 12}  # a form the page never showed them
    assert reader.post(url, unseen, from_page=url).status_code == 403
    assert list_requests(OWNER, assessment.id) == []

    outsider = _signed_in(TestClient(client.app), "admin", tenant="globex")
    assert outsider.get(url).status_code == 404
    assert outsider.post(url, unseen).status_code == 404
    assert list_requests(OWNER, assessment.id) == []

    owner = _signed_in(TestClient(client.app), "read", "signal")
    assert owner.post(url, _form(), from_page=url).status_code == 201
    (issued,) = list_requests(OWNER, assessment.id)
    revoke = f"/console/evidence-requests/{issued.id}/revoke"
    assert outsider.post(revoke, {}).status_code == 404
    assert reader.post(revoke, {}, from_page=url).status_code == 403
    assert list_requests(OWNER, assessment.id)[0].status == "open"


@pytest.fixture
def on_postgresql(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    with api_on_postgres(monkeypatch, tmp_path, postgres_url):
        yield TestClient(app)


def test_on_postgresql_a_request_an_arrival_and_its_judgement_through_the_pages(
    on_postgresql: TestClient,
) -> None:
    """PostgreSQL refuses NUL in text: the page refuses it first, naming the field."""
    assessment = create_assessment(OWNER, "acme-org", "Vendor evidence")
    browser = _signed_in(on_postgresql, "read", "signal", "approve")
    url = f"/console/assessments/{assessment.id}/evidence-requests"
    nul = browser.post(url, _form(instructions="The review\x00"), from_page=url)
    assert nul.status_code == 422, text(nul)
    assert "The instructions was not accepted: it must not contain the NUL" in text(nul)
    assert list_requests(OWNER, assessment.id) == []

    issued = browser.post(url, _form(), from_page=url)
    assert issued.status_code == 201, text(issued)
    found = _LINK.search(issued.text)
    assert found
    sent = on_postgresql.post(
        found.group(1).removeprefix("http://testserver"),
        files={"file": ("access-review.md", EVIDENCE, "text/markdown")},
    )
    assert sent.status_code == 201, sent.text
    (request,) = list_requests(OWNER, assessment.id)
    (document,) = request.documents
    judgement = f"/console/assessments/{assessment.id}/documents/{document}/judgement"
    assert judgement in browser.get(url).text
    page = browser.get(judgement)
    found = re.search(r'name="key" value="([^"]+)"', page.text)
    assert found
    form = {"key": found.group(1), "kind": "record", "reason": "a review record"}
    refused = browser.post(judgement, {**form, "reason": "a\x00"}, from_page=judgement)
    assert refused.status_code == 422 and "reason was not accepted" in text(refused)
    assert browser.post(judgement, form, from_page=judgement).status_code == 303
    view = document_judgement(OWNER, assessment.id, document)
    assert (view.kind, [a.reason for a in view.amendments]) == ("record", ["a review record"])
