"""A reviewer overrides a document's judgement in the console: kind and adoption with a
reason, kept with who and the values before, audited on the assessment's run, read back
on the document's page; the approve scope as the API's, a double post acting once."""

from __future__ import annotations

import re
import uuid

from fastapi.testclient import TestClient

from orchestrator.service.document_judgements import document_judgement
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import Actor, create_assessment, start_lifecycle
from orchestrator.service.queries import list_audit
from tests.console.kit import Browser, key, text

OWNER = Actor(tenant_id="acme", actor_id="user:owner@acme")
POLICY = b"# Access Control Policy\n\nAccess must be reviewed every quarter by the owner.\n"
_KEY = re.compile(r'name="key" value="([^"]+)"')


def _no_kick(_: uuid.UUID) -> None:
    """No worker here: the run stays where it started."""


def _signed_in(client: TestClient, *scopes: str) -> Browser:
    browser = Browser(client)
    assert browser.sign_in(key(*scopes, principal="user:ana@acme")).status_code == 303
    return browser


def test_a_reviewer_overrides_kind_and_adoption_with_a_reason(client: TestClient) -> None:
    assessment = create_assessment(OWNER, "acme-org", "Judged")
    document = upload_document(OWNER, assessment.id, "draft.md", POLICY, kick=_no_kick)
    run = start_lifecycle(OWNER, assessment.id, "judge-run", kick=_no_kick)
    browser = _signed_in(client, "read", "approve")
    url = f"/console/assessments/{assessment.id}/documents/{document.id}/judgement"
    assert url in browser.get(f"/console/assessments/{assessment.id}").text, "linked"
    page = browser.get(url)
    assert page.status_code == 200 and "No reviewer has amended it" in text(page)
    assert "drafted, not adopted" in text(page), "the form offers both adoptions"
    found = _KEY.search(page.text)
    assert found
    form = {
        "key": found.group(1),
        "kind": "record",
        "adoption": "template_not_adopted",
        "reason": "an unsigned draft of the policy",
    }

    amended = browser.post(url, form, from_page=url)
    assert amended.status_code == 303, text(amended)
    again = browser.post(url, form, from_page=url)  # a double click
    assert again.status_code == 303
    view = document_judgement(OWNER, assessment.id, document.id)
    assert (view.kind, view.adoption) == ("record", "template_not_adopted")
    (amendment,) = view.amendments
    assert (amendment.actor_id, amendment.reason) == ("user:ana@acme", form["reason"])
    shown = text(browser.get(amended.headers["location"]))
    assert "the next draft judges it record, drafted, not adopted" in shown
    assert "user:ana@acme" in shown and "an unsigned draft of the policy" in shown

    events = [
        e
        for e in list_audit(OWNER, run.id, limit=200).items
        if e.event_type == "lifecycle_workflow_document_judgement_amended"
    ]
    assert [e.actor_id for e in events] == ["user:ana@acme"]
    assert events[0].metadata["adoption"] == {"before": None, "after": "template_not_adopted"}

    adopted = browser.post(
        url,
        {"key": uuid.uuid4().hex, "adoption": "adopted", "reason": "signed since"},
        from_page=url,
    )
    assert adopted.status_code == 303
    view = document_judgement(OWNER, assessment.id, document.id)
    assert (view.kind, view.adoption, len(view.amendments)) == ("record", "adopted", 2)


def test_refusals_are_pages_and_change_nothing(client: TestClient) -> None:
    assessment = create_assessment(OWNER, "acme-org", "Judged")
    document = upload_document(OWNER, assessment.id, "policy.md", POLICY, kick=_no_kick)
    url = f"/console/assessments/{assessment.id}/documents/{document.id}/judgement"

    reader = _signed_in(client, "read", "signal")
    page = reader.get(url)
    assert page.status_code == 200 and "Override the judgement" not in page.text
    form = {"key": uuid.uuid4().hex, "kind": "policy", "reason": "x"}
    assert reader.post(url, form, from_page=url).status_code == 403

    reviewer = _signed_in(TestClient(client.app), "read", "approve")
    cases = {
        "nothing chosen": ({"key": uuid.uuid4().hex, "reason": "x"}, "Choose a kind"),
        "no reason": ({**form, "reason": "  "}, "needs a reason"),
        "unknown kind": ({**form, "kind": "memo"}, "kind must be one of"),
        "long reason": ({**form, "reason": "x" * 2001}, "reason is too long: at most 2000"),
    }
    for name, (body, said) in cases.items():
        refused = reviewer.post(url, body, from_page=url)
        assert refused.status_code == 422, (name, refused.status_code)
        assert said in text(refused), (name, text(refused))
    missing = url.replace(str(document.id), str(uuid.uuid4()))
    assert reviewer.post(missing, form, from_page=url).status_code == 404
    assert reviewer.get(missing).status_code == 404
    assert document_judgement(OWNER, assessment.id, document.id).amendments == []
