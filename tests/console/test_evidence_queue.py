"""The owner's side of evidence with a life, in the console: My queue lists the documents
this person keeps that expire within the reminder window or have expired, and renewing one
(a new version uploaded from the queue) takes it off the list and reassesses what cites it."""

from __future__ import annotations

import uuid
from datetime import timedelta

from fastapi.testclient import TestClient

from orchestrator.contracts.clock import utcnow
from orchestrator.service.document_versions import document_versions
from orchestrator.service.documents import upload_document
from orchestrator.service.evidence_life import set_document_life
from orchestrator.service.producer import Actor, create_assessment
from orchestrator.sweeps.evidence_expiry import sweep_evidence_expiry
from tests.console.kit import Browser, key, text, token

ANA = Actor(tenant_id="acme", actor_id="user:ana@acme")
POLICY = b"# Backup policy\n\nBackups are restored and tested every quarter by the ops lead.\n"


def _document(assessment: uuid.UUID, name: str, owner: str, expires_in_days: int) -> uuid.UUID:
    body = POLICY + name.encode()  # distinct content: not a duplicate of the others
    document = upload_document(ANA, assessment, name, body).id
    set_document_life(
        ANA,
        assessment,
        document,
        owner=owner,
        effective_on=None,
        review_every_days=None,
        expires_on=utcnow().date() + timedelta(days=expires_in_days),
    )
    return document


def _signed_in(client: TestClient, *scopes: str) -> Browser:
    browser = Browser(client)
    assert browser.sign_in(key(*scopes, principal="user:ana@acme")).status_code == 303
    return browser


def test_my_queue_lists_the_evidence_i_keep_that_is_due_or_expired(client: TestClient) -> None:
    assessment = create_assessment(ANA, "org-1", "Backups").id
    _document(assessment, "due.md", "user:ana@acme", 5)
    _document(assessment, "lapsed.md", "user:ana@acme", -3)
    _document(assessment, "later.md", "user:ana@acme", 200)
    _document(assessment, "someone-elses.md", "user:bo@acme", 2)
    sweep_evidence_expiry()  # reminds of due.md, marks lapsed.md expired

    page = text(_signed_in(client, "read").get("/console/queue"))

    section = page[page.index("Evidence you keep") :]
    assert "2 documents you own expiring within 30 days or expired" in section
    assert section.index("lapsed.md") < section.index("due.md"), "soonest first"
    lapsed = section[section.index("lapsed.md") : section.index("due.md")]
    assert "expired on" in lapsed and "at expiry" in lapsed, "the sweep told them on the day"
    due = section[section.index("due.md") :]
    assert "(in 5 days)" in due and "not yet" not in due, "the sweep reminded them"
    assert "later.md" not in section and "someone-elses.md" not in section


def test_a_new_version_uploaded_from_the_queue_renews_the_document(client: TestClient) -> None:
    assessment = create_assessment(ANA, "org-1", "Backups").id
    document = _document(assessment, "backup.md", "user:ana@acme", 3)
    browser = _signed_in(client, "signal", "read")
    queue = browser.get("/console/queue")
    form = f"/console/assessments/{assessment}/documents/{document}/versions"
    assert f'action="{form}"' in queue.text

    renewed = browser.client.post(
        form,
        data={"csrf_token": token(queue.text)},
        files={"file": ("backup-2027.md", POLICY + b"Reviewed again.\n", "text/markdown")},
    )

    assert renewed.status_code == 200, renewed.text
    assert "backup-2027.md uploaded" in text(renewed)
    versions = document_versions(ANA, assessment, document)
    assert [v.filename for v in versions] == ["backup.md", "backup-2027.md"]
    assert [v.life_status for v in versions] == ["superseded", "current"]
    after = text(browser.get("/console/queue"))
    assert "No document you own expires within 30 days." in after


def test_renewing_needs_the_signal_scope_and_a_file(client: TestClient) -> None:
    assessment = create_assessment(ANA, "org-1", "Backups").id
    document = _document(assessment, "backup.md", "user:ana@acme", 3)
    form = f"/console/assessments/{assessment}/documents/{document}/versions"
    reader = _signed_in(client, "read")
    refused = reader.client.post(
        form,
        data={"csrf_token": token(reader.get("/console/queue").text)},
        files={"file": ("b.md", POLICY + b"x", "text/markdown")},
    )
    assert refused.status_code == 403
    signaller = _signed_in(client, "signal", "read")
    empty = signaller.client.post(
        form,
        data={"csrf_token": token(signaller.get("/console/queue").text)},
        files={"file": ("", b"", "text/markdown")},
    )
    assert empty.status_code == 422 and "Choose the file of the new version" in empty.text
    assert len(document_versions(ANA, assessment, document)) == 1, "nothing was stored"
