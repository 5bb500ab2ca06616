"""Uploads: streamed under a size cap, typed by their content, never half-stored."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from orchestrator.api import app
from orchestrator.db.models import Document, InboxSignal
from orchestrator.db.session import transaction
from orchestrator.testing.reset import reset_process_state
from tests.api.conftest import Api, Headers

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02" + b"\0" * 64
LIMIT = 4096


@pytest.fixture
def small_limit(api: Api, monkeypatch: pytest.MonkeyPatch) -> Api:
    monkeypatch.setenv("LIFECYCLE_MAX_DOCUMENT_BYTES", str(LIMIT))
    reset_process_state()
    return api


def _nothing_stored(home: Path, assessment_id: str) -> None:
    storage = home / "storage"
    stored = (
        [p for p in (storage / "documents").rglob("*") if p.is_file()]
        if (storage / "documents").exists()
        else []
    )
    leftovers = list((storage / "incoming").glob("*")) if (storage / "incoming").exists() else []
    with transaction() as session:
        rows = session.scalar(select(func.count()).select_from(Document))
        signals = session.scalar(
            select(func.count())
            .select_from(InboxSignal)
            .where(InboxSignal.type == "documents_uploaded")
        )
    assert (stored, leftovers, rows, signals) == ([], [], 0, 0), assessment_id


def _problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == code
    return dict(response.json())


def _assessment(api: Api) -> tuple[Headers, str]:
    headers = api.key("signal", "read")
    return headers, api.create_assessment(headers)["id"]


def test_upload_stores_once_and_announces_to_the_active_run(api: Api, embedded: Path) -> None:
    headers, assessment_id = _assessment(api)
    run_id = api.start(headers, assessment_id, "s").json()["id"]
    content = b"# Access control\n\nMFA for every administrator.\n"
    first = api.upload(headers, assessment_id, "access.md", content, "text/plain")
    assert first.status_code == 201, first.text
    document = first.json()
    assert (document["media_type"], document["size_bytes"]) == ("text/markdown", len(content))
    again = api.upload(headers, assessment_id, "copy.md", content)
    assert (again.status_code, again.json()["id"], again.json()["duplicate"]) == (
        200,
        document["id"],
        True,
    )
    listed = api.client.get(f"/api/v1/assessments/{assessment_id}/documents", headers=headers)
    assert [d["id"] for d in listed.json()] == [document["id"]]
    signals = api.client.get(f"/api/v1/workflows/{run_id}/signals", headers=headers).json()
    announced = [s for s in signals["items"] if s["type"] == "documents_uploaded"]
    assert [s["payload"] for s in announced] == [{"document_id": document["id"]}]
    assert list((embedded / "storage" / "incoming").iterdir()) == []


def test_an_oversized_file_is_refused_while_streaming(small_limit: Api, embedded: Path) -> None:
    api = small_limit
    headers, assessment_id = _assessment(api)
    sent: list[int] = []
    boundary = "oversize-boundary"

    async def body() -> AsyncIterator[bytes]:
        yield (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n'
        ).encode()
        for index in range(100):
            sent.append(index)
            yield b"a" * 1024
        yield f"\r\n--{boundary}--\r\n".encode()

    async def post() -> httpx.Response:
        # httpx's ASGI transport hands the body over chunk by chunk, as a server would.
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            return await client.post(
                f"/api/v1/assessments/{assessment_id}/documents",
                content=body(),
                headers={**headers, "Content-Type": f"multipart/form-data; boundary={boundary}"},
            )

    problem = _problem(asyncio.run(post()), 413, "document_too_large")
    assert problem["limit_bytes"] == LIMIT and str(LIMIT) in problem["detail"]
    assert len(sent) < 10, "the rest of the body was never read"
    _nothing_stored(embedded, assessment_id)


def test_a_declared_length_over_the_limit_is_refused_before_reading(
    small_limit: Api, embedded: Path
) -> None:
    api = small_limit
    headers, assessment_id = _assessment(api)
    response = api.upload(headers, assessment_id, "big.md", b"# big\n" * 20_000)
    problem = _problem(response, 413, "payload_too_large")
    assert problem["limit_bytes"] > LIMIT  # the document plus room for multipart framing
    _nothing_stored(embedded, assessment_id)


@pytest.mark.parametrize(
    ("name", "content", "declared"),
    [
        ("photo.md", PNG, "text/markdown"),
        ("policy.pdf", b"# A markdown policy\n\nNot a PDF at all.\n", "application/pdf"),
        ("policy.md", b"# Policy\n\nText.\n", "image/png"),
    ],
)
def test_content_that_does_not_match_its_type_is_refused(
    api: Api, embedded: Path, name: str, content: bytes, declared: str
) -> None:
    headers, assessment_id = _assessment(api)
    problem = _problem(
        api.upload(headers, assessment_id, name, content, declared), 422, "document_refused"
    )
    assert name in problem["detail"]
    _nothing_stored(embedded, assessment_id)


def test_malformed_uploads_get_clear_problems(api: Api, embedded: Path) -> None:
    headers, assessment_id = _assessment(api)
    url = f"/api/v1/assessments/{assessment_id}/documents"
    _problem(
        api.client.post(url, headers=headers, json={"file": "x"}), 415, "unsupported_media_type"
    )
    _problem(
        api.client.post(
            url, headers=headers, data={"note": "no file"}, files={"other": ("a.md", b"# a")}
        ),
        422,
        "unexpected_field",
    )
    _problem(api.client.post(url, headers=headers, files={"file": ("", b"")}), 422, "file_missing")
    _problem(api.upload(headers, assessment_id, "empty.md", b""), 422, "document_refused")
    truncated = api.client.post(
        url,
        content=b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.md"\r\n\r\n# cut',
        headers={**headers, "Content-Type": "multipart/form-data; boundary=b"},
    )
    _problem(truncated, 400, "malformed_multipart")
    two = api.client.post(
        url, headers=headers, files=[("file", ("a.md", b"# a")), ("file", ("b.md", b"# b"))]
    )
    _problem(two, 422, "too_many_files")
    _problem(
        api.upload(headers, "5b1f0a0e-0000-4000-8000-000000000000", "a.md", b"# a"),
        404,
        "not_found",
    )
    _nothing_stored(embedded, assessment_id)
