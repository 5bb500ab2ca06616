"""KB search and ingestion outcomes over HTTP: tenant-scoped, validated, with provenance."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from orchestrator.api import app
from orchestrator.config.settings import reset_settings
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.session import transaction
from orchestrator.jobs.interface import JobContext
from orchestrator.service.apikeys import create_key
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import create_assessment
from tests.support import documents as files
from tests.support.services import ACCESS_POLICY
from workers.ingestion.service import ingest_documents
from workers.kb_index.service import index_kb

OWNER = Actor("acme", "user:owner@acme")


def _headers(tenant: str = "acme") -> dict[str, str]:
    _, key = create_key(tenant, "user:reader", ("read",))
    return {"Authorization": f"Bearer {key}"}


def _run_job(assessment_id: uuid.UUID, kind: JobKind, step: Step, storage: Path) -> None:
    request = JobRequest(
        job_id=f"job-{step.value}",
        kind=kind,
        run_id=uuid.uuid4(),
        step=step,
        attempt=1,
        idempotency_key=f"k-{step.value}",
        trace_id="t",
        tenant_id=OWNER.tenant_id,
        organization_id="org",
        assessment_id=assessment_id,
        actor_id="system:test",
        parameters={},
    )
    service = ingest_documents if kind is JobKind.INGEST_DOCUMENTS else index_kb
    with transaction() as session:
        service(JobContext(request=request, session=session, storage_dir=storage))


@pytest.fixture
def indexed(
    embedded: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[TestClient, uuid.UUID]]:
    monkeypatch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")  # no runs move here
    reset_settings()
    assessment = create_assessment(OWNER, "org", "HTTP search")
    kick = lambda run_id: None  # noqa: E731 - no run to wake
    upload_document(OWNER, assessment.id, "access.md", ACCESS_POLICY.encode(), kick=kick)
    upload_document(
        OWNER,
        assessment.id,
        "backups.pdf",
        files.pdf_bytes([["1 Backups", "Backups are encrypted and restored every quarter."]]),
        kick=kick,
    )
    upload_document(OWNER, assessment.id, "scan.pdf", files.image_only_pdf(), kick=kick)
    storage = embedded / "storage"
    _run_job(assessment.id, JobKind.INGEST_DOCUMENTS, Step.INGEST_DOCUMENTS, storage)
    _run_job(assessment.id, JobKind.INDEX_KB, Step.INDEX_KB, storage)
    yield TestClient(app), assessment.id
    reset_settings()


def test_search_returns_ranked_hits_with_provenance(indexed: tuple[TestClient, uuid.UUID]) -> None:
    client, assessment_id = indexed
    response = client.get(
        f"/api/v1/assessments/{assessment_id}/kb/search",
        params={"q": "quarterly restore of encrypted backups", "k": 2},
        headers=_headers(),
    )
    assert response.status_code == 200, response.text
    hits = response.json()
    assert hits[0]["filename"] == "backups.pdf"
    assert (hits[0]["page_start"], hits[0]["page_end"]) == (1, 1)
    assert hits[0]["heading_path"] == "1 Backups"
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_search_is_tenant_scoped_and_validated(indexed: tuple[TestClient, uuid.UUID]) -> None:
    client, assessment_id = indexed
    url = f"/api/v1/assessments/{assessment_id}/kb/search"
    assert client.get(url, params={"q": "backups"}, headers=_headers("other")).status_code == 404
    assert client.get(url, params={"q": ""}, headers=_headers()).status_code == 422
    assert client.get(url, params={"q": "x", "k": 500}, headers=_headers()).status_code == 422


def test_document_outcomes_show_counts_and_typed_reasons(
    indexed: tuple[TestClient, uuid.UUID],
) -> None:
    client, assessment_id = indexed
    response = client.get(
        f"/api/v1/assessments/{assessment_id}/documents/outcomes", headers=_headers()
    )
    assert response.status_code == 200, response.text
    outcomes = {o["filename"]: o for o in response.json()}
    assert outcomes["access.md"]["status"] == "ingested" and outcomes["access.md"]["chunks"] > 0
    assert outcomes["backups.pdf"]["pages"] == 1
    scan = outcomes["scan.pdf"]
    assert (scan["status"], scan["error_code"]) == ("failed", "no_extractable_text")
    assert "scanned" in scan["error_message"]
