"""Evidence with a life over HTTP: owner and dates, versions with their history, and the
evidence sweep's reminder then expiry."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sqlalchemy import select

from orchestrator.db.ops_models import Notification
from orchestrator.db.session import transaction
from orchestrator.sweeps.evidence_expiry import sweep_evidence_expiry
from tests.api.conftest import Api, Headers
from tests.support.documents import docx_bomb

POLICY_V1 = b"# Access control policy\n\nAccess is reviewed every quarter by the IAM lead.\n"
POLICY_V2 = b"# Access control policy\n\nAccess is reviewed every month by the IAM lead.\n"


def _document(api: Api) -> tuple[Headers, str, str]:
    headers = api.key("signal", "read")
    assessment = api.create_assessment(headers)["id"]
    uploaded = api.upload(headers, assessment, "access.md", POLICY_V1)
    assert uploaded.status_code == 201, uploaded.text
    return headers, assessment, uploaded.json()["id"]


def _life(api: Api, headers: Headers, assessment: str, document: str, **body: object) -> dict:
    response = api.client.put(
        f"/api/v1/assessments/{assessment}/documents/{document}/life", headers=headers, json=body
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def _new_version(
    api: Api, headers: Headers, assessment: str, document: str, content: bytes, name: str
) -> object:
    return api.client.post(
        f"/api/v1/assessments/{assessment}/documents/{document}/versions",
        headers=headers,
        files={"file": (name, content, "text/markdown")},
    )


def _versions(api: Api, headers: Headers, assessment: str, document: str) -> list[dict]:
    response = api.client.get(
        f"/api/v1/assessments/{assessment}/documents/{document}/versions", headers=headers
    )
    assert response.status_code == 200, response.text
    return list(response.json())


def test_owner_dates_and_cadence_give_the_expiry(api: Api, embedded: Path) -> None:
    headers, assessment, document = _document(api)
    life = _life(
        api,
        headers,
        assessment,
        document,
        owner="user:iam-lead@acme",
        effective_on="2026-01-15",
        review_every_days=365,
    )
    assert (life["owner"], life["effective_on"], life["expires_on"]) == (
        "user:iam-lead@acme",
        "2026-01-15",
        "2027-01-15",
    )
    assert life["life_status"] == "current" and life["series_version"] == 1
    explicit = _life(api, headers, assessment, document, expires_on="2026-06-30")
    assert explicit["expires_on"] == "2026-06-30" and explicit["owner"] is None
    refused = api.client.put(
        f"/api/v1/assessments/{assessment}/documents/{document}/life",
        headers=headers,
        json={"effective_on": "2026-06-30", "expires_on": "2026-01-01"},
    )
    assert refused.status_code == 422, refused.text


def test_a_new_version_keeps_the_history(api: Api, embedded: Path) -> None:
    headers, assessment, document = _document(api)
    _life(api, headers, assessment, document, owner="user:iam@acme", review_every_days=90)
    second = _new_version(api, headers, assessment, document, POLICY_V2, "access-2027.md")
    assert second.status_code == 201, second.text  # type: ignore[attr-defined]
    new_id = second.json()["id"]  # type: ignore[attr-defined]
    history = _versions(api, headers, assessment, new_id)
    assert [(v["id"], v["series_version"], v["life_status"]) for v in history] == [
        (document, 1, "superseded"),
        (new_id, 2, "current"),
    ]
    assert history[0]["superseded_by"] == new_id
    assert {v["series_id"] for v in history} == {document}
    assert history[1]["owner"] == "user:iam@acme"
    assert (
        history[1]["expires_on"]
        == (date.fromisoformat(history[1]["effective_on"]) + timedelta(days=90)).isoformat()
    )
    # A version of the replaced one goes on the series: it replaces the version in force.
    third = _new_version(api, headers, assessment, document, POLICY_V2 + b"\nv3\n", "a3.md")
    assert third.status_code == 201, third.text  # type: ignore[attr-defined]
    statuses = [v["life_status"] for v in _versions(api, headers, assessment, document)]
    assert statuses == ["superseded", "superseded", "current"]


def test_same_content_or_a_hostile_file_makes_no_version(api: Api, embedded: Path) -> None:
    headers, assessment, document = _document(api)
    same = _new_version(api, headers, assessment, document, POLICY_V1, "copy.md")
    assert same.status_code == 200 and same.json()["duplicate"] is True  # type: ignore[attr-defined]
    bomb = api.client.post(
        f"/api/v1/assessments/{assessment}/documents/{document}/versions",
        headers=headers,
        files={"file": ("policy.docx", docx_bomb(), "application/octet-stream")},
    )
    assert bomb.status_code == 422, bomb.text
    assert bomb.json()["reason"] == "archive_limits"
    empty = _new_version(api, headers, assessment, document, b"", "empty.md")
    assert empty.status_code == 422, empty.text  # type: ignore[attr-defined]
    versions = _versions(api, headers, assessment, document)
    assert [(v["id"], v["life_status"]) for v in versions] == [(document, "current")]


def test_the_sweep_reminds_the_owner_then_expires_the_document(api: Api, embedded: Path) -> None:
    headers, assessment, document = _document(api)
    today = date.today()
    _life(
        api,
        headers,
        assessment,
        document,
        owner="user:iam@acme",
        expires_on=(today + timedelta(days=10)).isoformat(),
    )
    assert sweep_evidence_expiry() == {"reminded": 1, "expired": 0}
    assert sweep_evidence_expiry() == {"reminded": 0, "expired": 0}
    queue = api.client.get(
        "/api/v1/evidence/queue", headers=headers, params={"owner": "user:iam@acme"}
    )
    assert [(d["id"], d["life_status"]) for d in queue.json()] == [(document, "current")]
    assert queue.json()[0]["reminded_at"] is not None
    _life(api, headers, assessment, document, owner="user:iam@acme", expires_on=str(today))
    assert sweep_evidence_expiry() == {"reminded": 0, "expired": 1}
    assert sweep_evidence_expiry() == {"reminded": 0, "expired": 0}
    (version,) = _versions(api, headers, assessment, document)
    assert version["life_status"] == "expired" and version["expired_at"] is not None
    with transaction() as session:
        events = session.scalars(
            select(Notification.event_type).order_by(Notification.created_at)
        ).all()
        payloads = session.scalars(select(Notification.payload)).all()
    assert list(events) == ["evidence.expiring", "evidence.expired"]
    assert {p["owner"] for p in payloads} == {"user:iam@acme"}
    assert {p["document_id"] for p in payloads} == {document}
