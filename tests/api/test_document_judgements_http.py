"""A reviewer amends a document's kind or adoption through HTTP: kept, readable back, and
refused with a clear problem when the input is wrong (nothing is stored then)."""

from __future__ import annotations

import uuid

from tests.api.conftest import Api

POLICY = b"# Access Control Policy\n\nAccess must be reviewed every quarter by the owner.\n"


def test_a_reviewer_amends_a_documents_judgement_and_reads_it_back(api: Api) -> None:
    owner = api.key("signal", "read", tenant="tenant-judge", principal="user:owner@acme")
    reviewer = api.key("approve", "read", tenant="tenant-judge", principal="user:ana@acme")
    assessment = api.create_assessment(owner)
    uploaded = api.upload(owner, assessment["id"], "log.md", POLICY)
    assert uploaded.status_code == 201, uploaded.text
    url = f"/api/v1/assessments/{assessment['id']}/documents/{uploaded.json()['id']}/judgement"

    before = api.client.get(url, headers=owner)
    assert before.status_code == 200 and before.json()["amendments"] == []

    body = {"kind": "policy", "reason": "an access policy, whatever its file is called"}
    refused = api.client.post(url, headers=owner, json=body)  # no approve scope
    assert refused.status_code == 403, refused.text

    headers = {**reviewer, "Idempotency-Key": "judge-log-1"}
    amended = api.client.post(url, headers=headers, json=body)
    assert amended.status_code == 200, amended.text
    view = amended.json()
    assert (view["kind"], view["overridden_by"]) == ("policy", "user:ana@acme")
    assert view["amendments"][0]["reason"] == body["reason"]
    replayed = api.client.post(url, headers=headers, json=body)
    assert replayed.status_code == 200 and replayed.headers.get("Idempotent-Replayed") == "true"

    read = api.client.get(url, headers=owner).json()
    assert read["kind"] == "policy" and len(read["amendments"]) == 1


def test_bad_amendments_get_clear_problems_and_change_nothing(api: Api) -> None:
    owner = api.key("signal", "read", tenant="tenant-judge2", principal="user:owner@acme")
    reviewer = api.key("approve", "read", tenant="tenant-judge2", principal="user:ana@acme")
    assessment = api.create_assessment(owner)
    document = api.upload(owner, assessment["id"], "policy.md", POLICY).json()["id"]
    url = f"/api/v1/assessments/{assessment['id']}/documents/{document}/judgement"

    unknown_kind = api.client.post(url, headers=reviewer, json={"kind": "memo", "reason": "x"})
    assert unknown_kind.status_code == 422 and "kind" in unknown_kind.text
    no_reason = api.client.post(url, headers=reviewer, json={"kind": "policy"})
    assert no_reason.status_code == 422 and "reason" in no_reason.text
    nothing = api.client.post(url, headers=reviewer, json={"reason": "x"})
    assert nothing.status_code == 422 and "kind, the adoption or both" in nothing.text
    missing = url.replace(document, str(uuid.uuid4()))
    unknown = api.client.post(missing, headers=reviewer, json={"kind": "plan", "reason": "x"})
    assert unknown.status_code == 404 and "has no document" in unknown.text
    assert api.client.get(url, headers=owner).json()["amendments"] == []
