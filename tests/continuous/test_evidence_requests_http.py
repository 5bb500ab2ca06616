"""Evidence requests over HTTP: a link whose page needs no account, which uploads only into
its own request, survives hostile files, is rate-limited and refused once expired or
revoked."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.db.continuous_models import EvidenceRequest
from orchestrator.db.ops_models import Notification
from orchestrator.db.session import transaction
from orchestrator.service import evidence_requests
from orchestrator.sweeps.overdue_requests import sweep_overdue_requests
from tests.api.conftest import Api, Headers
from tests.continuous.kit import issue_request
from tests.support.documents import docx_bomb

EVIDENCE = b"# Quarterly access review\n\nThe IAM lead reviewed all privileged accounts.\n"


def _send(api: Api, link: str, name: str, content: bytes, media: str = "text/markdown") -> Any:
    return api.client.post(link, files={"file": (name, content, media)})


def _requests(api: Api, headers: Headers, assessment: str) -> list[dict[str, Any]]:
    listed = api.client.get(f"/api/v1/assessments/{assessment}/evidence-requests", headers=headers)
    assert listed.status_code == 200, listed.text
    return list(listed.json())


def test_the_link_uploads_into_its_request_only(api: Api, embedded: Path) -> None:
    headers = api.key("signal", "read")
    assessment = api.create_assessment(headers)["id"]
    other = api.create_assessment(headers, name="another assessment")["id"]
    issued = issue_request(api, headers, assessment)
    link = issued["link"]
    assert link.startswith("/w/evidence/")

    page = api.client.get(link)  # no account
    assert page.status_code == 200 and "it-ops@vendor.example" in page.text
    assert "&lt;b&gt;last quarter" in page.text and "<b>last" not in page.text

    sent = _send(api, link, "access-review.md", EVIDENCE)
    assert sent.status_code == 201, sent.text
    (answered,) = _requests(api, headers, assessment)
    assert answered["status"] == "answered" and len(answered["documents"]) == 1
    documents = api.client.get(f"/api/v1/assessments/{assessment}/documents", headers=headers)
    assert [d["id"] for d in documents.json()] == answered["documents"]
    elsewhere = api.client.get(f"/api/v1/assessments/{other}/documents", headers=headers)
    assert elsewhere.json() == []

    request_id, secret = link.removeprefix("/w/evidence/").split(".", 1)
    assert api.client.get(f"/w/evidence/{request_id}.{secret[:-2]}xx").status_code == 404
    assert _send(api, f"/w/evidence/{request_id}", "x.md", EVIDENCE).status_code == 404
    foreign = issue_request(api, headers, other)["link"].split(".", 1)[0]
    assert api.client.get(f"{foreign}.{secret}").status_code == 404


def test_hostile_files_are_refused_and_nothing_is_attributed(api: Api, embedded: Path) -> None:
    headers = api.key("signal", "read")
    assessment = api.create_assessment(headers)["id"]
    link = issue_request(api, headers, assessment)["link"]
    bomb = _send(api, link, "review.docx", docx_bomb(), "application/octet-stream")
    assert bomb.status_code == 422 and bomb.json()["reason"] == "archive_limits", bomb.text
    assert _send(api, link, "empty.md", b"").status_code == 422
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
    assert _send(api, link, "shot.md", png).status_code == 422
    (untouched,) = _requests(api, headers, assessment)
    assert untouched["status"] == "open" and untouched["documents"] == []
    # The link still works for a proper file afterwards.
    assert _send(api, link, "review.md", EVIDENCE).status_code == 201


def test_revoked_or_expired_links_take_nothing(api: Api, embedded: Path) -> None:
    headers = api.key("signal", "read")
    assessment = api.create_assessment(headers)["id"]
    revoked = issue_request(api, headers, assessment)
    answer = api.client.post(
        f"/api/v1/evidence-requests/{revoked['request']['id']}/revoke", headers=headers
    )
    assert answer.status_code == 200 and answer.json()["status"] == "revoked"
    assert api.client.get(revoked["link"]).status_code == 410
    refused = _send(api, revoked["link"], "late.md", EVIDENCE)
    assert refused.status_code == 410 and refused.json()["code"] == "link_refused"

    expired = issue_request(api, headers, assessment)
    with transaction() as session:
        session.execute(
            update(EvidenceRequest)
            .where(EvidenceRequest.id == uuid.UUID(expired["request"]["id"]))
            .values(link_expires_at=utcnow() - timedelta(seconds=1))
        )
    assert api.client.get(expired["link"]).status_code == 410
    assert _send(api, expired["link"], "late.md", EVIDENCE).status_code == 410
    documents = api.client.get(f"/api/v1/assessments/{assessment}/documents", headers=headers)
    assert documents.json() == []


def test_a_link_is_rate_limited(api: Api, embedded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evidence_requests, "UPLOADS_PER_HOUR", 2)
    headers = api.key("signal", "read")
    assessment = api.create_assessment(headers)["id"]
    link = issue_request(api, headers, assessment)["link"]
    assert _send(api, link, "a.md", EVIDENCE + b"a").status_code == 201
    assert _send(api, link, "b.md", EVIDENCE + b"b").status_code == 201
    third = _send(api, link, "c.md", EVIDENCE + b"c")
    assert third.status_code == 429 and third.json()["code"] == "rate_limited", third.text


def test_an_overdue_request_is_reminded_then_escalated(api: Api, embedded: Path) -> None:
    headers = api.key("signal", "read")
    assessment = api.create_assessment(headers)["id"]
    issued = issue_request(api, headers, assessment)
    due = date.fromisoformat(issued["request"]["due_on"])
    at_due = datetime.combine(due, datetime.min.time(), UTC)
    assert sweep_overdue_requests(at_due) == {"reminded": 0, "escalated": 0}
    assert sweep_overdue_requests(at_due + timedelta(days=1)) == {"reminded": 1, "escalated": 0}
    assert sweep_overdue_requests(at_due + timedelta(days=2)) == {"reminded": 0, "escalated": 0}
    late = at_due + timedelta(days=9)
    assert sweep_overdue_requests(late) == {"reminded": 0, "escalated": 1}
    assert sweep_overdue_requests(late) == {"reminded": 0, "escalated": 0}
    with transaction() as session:
        events = session.scalars(select(Notification.event_type)).all()
    assert sorted(events) == ["evidence_request.escalated", "evidence_request.overdue"]
    # An answered request is not chased.
    answered = issue_request(api, headers, assessment)
    assert _send(api, answered["link"], "r.md", EVIDENCE).status_code == 201
    assert sweep_overdue_requests(late + timedelta(days=30)) == {"reminded": 0, "escalated": 0}


def test_a_browser_form_gets_pages(api: Api, embedded: Path) -> None:
    """The form's answers for a browser: a redirect to the page saying what arrived, a
    refusal in words (escaped), and for a dead link a page instead of problem JSON."""
    headers = api.key("signal", "read")
    assessment = api.create_assessment(headers)["id"]
    issued = issue_request(api, headers, assessment)
    link = issued["link"]
    html = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}

    sent = api.client.post(
        link,
        headers=html,
        files={"file": ("<review>.md", EVIDENCE, "text/markdown")},
        follow_redirects=False,
    )
    assert sent.status_code == 303, sent.text
    page = api.client.get(sent.headers["location"], headers=html)
    assert page.status_code == 200
    assert "Received &lt;review&gt;.md. Thank you." in page.text
    assert "Files received so far: 1" in page.text
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]

    refused = api.client.post(
        link, headers=html, files={"file": ("empty.md", b"", "text/markdown")}
    )
    assert refused.status_code == 422 and refused.headers["content-type"].startswith("text/html")
    assert "Not received" in refused.text and "Back to the request" in refused.text

    api.client.post(f"/api/v1/evidence-requests/{issued['request']['id']}/revoke", headers=headers)
    gone = api.client.get(link, headers=html)
    assert gone.status_code == 410 and "This link takes no files" in gone.text
    assert "<form" not in gone.text
    # Without asking for HTML the answers stay JSON.
    assert api.client.get(link).json()["code"] == "link_refused"


def test_the_link_never_tells_what_the_assessment_already_holds(api: Api, embedded: Path) -> None:
    headers = api.key("signal", "read")
    assessment = api.create_assessment(headers)["id"]
    held = api.upload(headers, assessment, "board-minutes-secret.md", EVIDENCE)
    assert held.status_code == 201, held.text
    link = issue_request(api, headers, assessment)["link"]

    fresh = _send(api, link, "other.md", b"# Another file\n\nIts own words.\n")
    again = _send(api, link, "mine.md", EVIDENCE)
    assert (fresh.status_code, again.status_code) == (201, 201), again.text
    assert set(again.json()) == set(fresh.json()), "answered as any accepted file"
    assert again.json()["filename"] == "mine.md"
    for answer in (again.text, fresh.text):
        assert "board-minutes-secret" not in answer and "duplicate" not in answer

    html = {"Accept": "text/html"}
    sent = api.client.post(
        link,
        headers=html,
        files={"file": ("mine.md", EVIDENCE, "text/markdown")},
        follow_redirects=False,
    )
    assert sent.status_code == 303 and "received=mine.md" in sent.headers["location"]
    page = api.client.get(sent.headers["location"], headers=html)
    assert "board-minutes-secret" not in page.text and "duplicate" not in page.text


def test_the_link_takes_files_up_to_the_document_limit_and_a_browser_gets_pages(
    api: Api, embedded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The general request-body cap (1 MiB) is not the link's: a document is."""
    monkeypatch.setenv("LIFECYCLE_MAX_DOCUMENT_BYTES", str(3 * 2**20))
    reset_settings()
    headers = api.key("signal", "read")
    assessment = api.create_assessment(headers)["id"]
    link = issue_request(api, headers, assessment)["link"]
    big = b"# A long review\n\n" + b"Every privileged account was reviewed.\n" * 50_000
    assert 2**20 < len(big) < 3 * 2**20

    assert _send(api, link, "long-review.md", big).status_code == 201
    html = {"Accept": "text/html"}
    sent = api.client.post(
        link,
        headers=html,
        files={"file": ("long-review-2.md", big + b"More.\n", "text/markdown")},
        follow_redirects=False,
    )
    assert sent.status_code == 303, sent.text

    too_big = big * 3
    refused = api.client.post(
        link, headers=html, files={"file": ("huge.md", too_big, "text/markdown")}
    )
    assert refused.status_code == 413
    assert refused.headers["content-type"].startswith("text/html"), refused.text
    assert "Not received" in refused.text and "limit" in refused.text
    as_json = _send(api, link, "huge.md", too_big)
    assert as_json.status_code == 413
    assert as_json.headers["content-type"] == "application/problem+json"
