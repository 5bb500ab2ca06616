"""The roster on the assessment's console page: a person added with their roles and
domains, shown, and removed; a bad entry answered with a page that says why, nothing
stored; a reader sees the roster without its forms."""

from __future__ import annotations

from fastapi.testclient import TestClient

from orchestrator.service.producer import Actor, create_assessment
from orchestrator.service.roster import roster, roster_history
from tests.console.kit import Browser, form_key, key, text, token

ANA = Actor(tenant_id="acme", actor_id="user:ana@acme")


def _signed_in(client: TestClient, *scopes: str) -> Browser:
    browser = Browser(client)
    assert browser.sign_in(key(*scopes, principal="user:ana@acme")).status_code == 303
    return browser


def test_a_person_is_added_shown_and_removed_from_the_assessment_page(
    client: TestClient,
) -> None:
    assessment = create_assessment(ANA, "org-1", "FY27").id
    browser = _signed_in(client, "signal", "read")
    page = f"/console/assessments/{assessment}"
    assert "Nobody is on the roster yet" in text(browser.get(page))
    added = browser.post(
        f"{page}/roster",
        {
            "name": "Lee Park",
            "email": "lee@example.org",
            "roles": ["control_owner", "isso"],
            "title": "Identity & Access Manager",
            "domains": "iac, hrs",
        },
        from_page=page,
    )
    assert added.status_code == 303, added.text
    shown = text(browser.get(page))
    assert "Lee Park lee@example.org" in shown and "control owner, isso" in shown
    assert "IAC, HRS" in shown
    (person,) = roster(ANA, assessment)
    assert (person.roles, person.domains, person.added_by) == (
        ["control_owner", "isso"],
        ["IAC", "HRS"],
        "user:ana@acme",
    )
    removed = browser.post(f"{page}/roster/{person.id}/remove", {}, from_page=page)
    assert removed.status_code == 303, removed.text
    assert roster(ANA, assessment) == []
    assert [e.action for e in roster_history(ANA, assessment)] == ["added", "removed"]


def test_a_bad_entry_gets_a_page_saying_why_and_nothing_is_stored(client: TestClient) -> None:
    assessment = create_assessment(ANA, "org-1", "FY27").id
    browser = _signed_in(client, "signal", "read")
    page = f"/console/assessments/{assessment}"
    refused = browser.post(
        f"{page}/roster", {"name": "No Contact", "roles": ["owner"]}, from_page=page
    )
    assert 400 <= refused.status_code < 500
    assert "needs an email or a principal id" in text(refused)
    assert roster(ANA, assessment) == [] and roster_history(ANA, assessment) == []


def test_a_reader_sees_the_roster_without_its_forms(client: TestClient) -> None:
    assessment = create_assessment(ANA, "org-1", "FY27").id
    writer = _signed_in(client, "signal", "read")
    page = f"/console/assessments/{assessment}"
    writer.post(
        f"{page}/roster",
        {"name": "Dana Whitfield", "principal": "user:dana@acme", "roles": ["owner"]},
        from_page=page,
    )
    reader = _signed_in(TestClient(client.app), "read")
    shown = reader.get(page)
    assert "Dana Whitfield" in text(shown)
    assert "Add to the roster" not in shown.text and "/roster/" not in shown.text


def test_the_same_add_form_sent_twice_adds_the_person_once(client: TestClient) -> None:
    assessment = create_assessment(ANA, "org-1", "FY27").id
    browser = _signed_in(client, "signal", "read")
    page = f"/console/assessments/{assessment}"
    shown = browser.get(page).text
    minted = form_key(shown, f"{page}/roster")
    assert minted
    form = {"csrf_token": token(shown), "key": minted, "name": "Lee Park", "roles": ["owner"]}
    form["email"] = "lee@example.org"
    answers = [client.post(f"{page}/roster", data=form, follow_redirects=False) for _ in "ab"]
    assert [a.status_code for a in answers] == [303, 303]
    assert answers[0].headers["location"] == answers[1].headers["location"]
    assert [p.name for p in roster(ANA, assessment)] == ["Lee Park"]
    assert [e.action for e in roster_history(ANA, assessment)] == ["added"]
