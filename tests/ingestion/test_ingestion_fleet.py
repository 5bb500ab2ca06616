"""Hostile documents against a real ingestion worker process (prefork pool, as in
production): each fails alone with its typed reason, the run goes on, and the same
worker process serves the next assessment."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator.config.settings import get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.identity import Actor
from orchestrator.db.ingestion_models import DocumentOutcome
from orchestrator.db.models import Document, DocumentChunk, Job
from orchestrator.db.session import transaction
from orchestrator.db.storage import put_bytes
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import create_assessment, get_run, start_lifecycle
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support import documents as files
from tests.support import hostile_readers
from tests.support.fleet_runs import new_tenant
from tests.support.polling import scaled, wait_for

SAMPLES = Path(__file__).resolve().parents[2] / "orchestrator" / "demo" / "samples"
HOSTILE_ENV = {
    "LIFECYCLE_INGEST_READER_PLUGINS": json.dumps(["tests.support.hostile_readers"]),
    # Short, for hangs.bin (a parser that hangs by design); longer on a slow machine.
    "LIFECYCLE_INGEST_PARSE_TIMEOUT_S": str(scaled(3)),
}
FRAMEWORK_WAIT = "wait_for_framework_selection"


def _add_raw(
    owner: Actor, assessment_id: uuid.UUID, name: str, data: bytes, media_type: str
) -> None:
    """A stored document of a type only the test readers parse (uploads refuse it)."""
    path, digest = put_bytes(get_settings().resolved_storage_dir / "documents", data)
    with transaction() as session:
        session.add(
            Document(
                tenant_id=owner.tenant_id,
                assessment_id=assessment_id,
                filename=name,
                media_type=media_type,
                size_bytes=len(data),
                sha256=digest,
                storage_path=str(path),
                status="uploaded",
                uploaded_by=owner.actor_id,
                created_at=utcnow(),
            )
        )


def _outcomes(assessment_id: uuid.UUID) -> dict[str, tuple[str, str | None]]:
    with transaction() as session:
        rows = session.execute(
            select(Document.filename, Document.status, DocumentOutcome.error_code)
            .outerjoin(DocumentOutcome, DocumentOutcome.document_id == Document.id)
            .where(Document.assessment_id == assessment_id)
        ).all()
    return {name: (status, code) for name, status, code in rows}


def _chunks(assessment_id: uuid.UUID) -> int:
    with transaction() as session:
        return len(
            session.scalars(
                select(DocumentChunk.id).where(DocumentChunk.assessment_id == assessment_id)
            ).all()
        )


def _sample(owner: Actor, assessment_id: uuid.UUID, index: int = 0) -> None:
    path = sorted(SAMPLES.iterdir())[index]
    upload_document(owner, assessment_id, path.name, path.read_bytes())


@pytest.mark.broker_matrix
def test_hostile_documents_fail_alone_and_the_worker_keeps_serving(fleet: Fleet) -> None:
    """One fleet for three assessments: hostile, ordinary, and scans only."""
    fleet.start("orchestrator", concurrency=2)
    worker = fleet.start(
        "ingestion,kb_index,analysis", pool="prefork", concurrency=1, extra_env=HOSTILE_ENV
    )
    pid = fleet.workers[worker].pid
    owner, _ = new_tenant()

    hostile = create_assessment(owner, "org-1", "Hostile documents")
    _sample(owner, hostile.id)
    upload_document(owner, hostile.id, "locked.pdf", files.pdf_bytes([["secret"]], password="pw"))
    upload_document(owner, hostile.id, "scan.pdf", files.image_only_pdf())
    upload_document(owner, hostile.id, "header-only.pdf", b"%PDF-1.4\n%%EOF\n")
    _add_raw(owner, hostile.id, "hangs.bin", b"loop", hostile_readers.HANG)
    _add_raw(owner, hostile.id, "crashes.bin", b"segv", hostile_readers.CRASH)
    run = start_lifecycle(owner, hostile.id, idempotency_key=f"start-{hostile.id}")
    wait_for(
        lambda: get_run(owner, run.id).current_step == FRAMEWORK_WAIT,
        timeout_s=90,
        what="ingestion, indexing and pre-analysis despite the hostile documents",
    )

    outcomes = _outcomes(hostile.id)
    assert outcomes["locked.pdf"] == ("failed", "encrypted")
    assert outcomes["scan.pdf"] == ("failed", "no_extractable_text")
    assert outcomes["header-only.pdf"] == ("failed", "corrupt_file")
    assert outcomes["hangs.bin"] == ("failed", "parse_timeout")
    assert outcomes["crashes.bin"] == ("failed", "parser_crashed")
    assert sum(status == "ingested" for status, _ in outcomes.values()) == 1
    with transaction() as session:
        job = session.scalar(
            select(Job).where(Job.run_id == run.id, Job.step == "ingest_documents")
        )
        assert job is not None and job.status == "succeeded" and job.summary is not None
        assert job.summary["failed"] == 5 and len(job.summary["warnings"]) == 5

    # The same worker process, with a fresh parser behind it, serves the next assessment.
    calm = create_assessment(owner, "org-1", "Ordinary documents")
    _sample(owner, calm.id, 1)
    second = start_lifecycle(owner, calm.id, idempotency_key=f"start-{calm.id}")
    wait_for(
        lambda: get_run(owner, second.id).current_step == FRAMEWORK_WAIT,
        timeout_s=60,
        what="the next assessment on the same worker",
    )
    assert _chunks(calm.id) > 0
    assert fleet.workers[worker].poll() is None and fleet.workers[worker].pid == pid

    # When no document yields text, the ingestion job fails with a precise code.
    scans = create_assessment(owner, "org-1", "Only scans")
    upload_document(owner, scans.id, "scan.pdf", files.image_only_pdf())
    third = start_lifecycle(owner, scans.id, idempotency_key=f"start-{scans.id}")

    def failed_job() -> Job | None:
        with transaction() as session:
            return session.scalar(
                select(Job).where(
                    Job.run_id == third.id, Job.step == "ingest_documents", Job.status == "failed"
                )
            )

    wait_for(lambda: failed_job() is not None, timeout_s=60, what="the ingestion job to fail")
    job = failed_job()
    assert job is not None and job.error is not None
    assert job.error["code"] == "no_extractable_text" and job.error["retryable"] is False
    assert "scan.pdf: [no_extractable_text]" in job.error["message"]
