"""When ingestion finds no text: each document's outcome stays recorded (SQLite and
PostgreSQL), and a readable document uploaded while that attempt ran is ingested by
another attempt instead of being lost (PostgreSQL, where an upload can land mid-job)."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator.contracts.identity import Actor
from orchestrator.contracts.jobs import JobRequest
from orchestrator.db.models import Job, StepExecution
from orchestrator.db.session import transaction
from orchestrator.engine.coordinator import coordinate
from orchestrator.jobs.interface import JobContext, JobResult, JobService, Prepare
from orchestrator.jobs.runtime import Delivery, JobRun, run_job
from orchestrator.service.document_outcomes import list_outcomes
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import create_assessment, get_run, start_lifecycle
from orchestrator.testing.reset import reset_process_state
from tests.support import documents as files
from tests.support.embedded import LIFECYCLE_VARS
from workers.ingestion.fan_out import prepare_documents
from workers.ingestion.sandbox import ParserSandbox
from workers.ingestion.service import ingest_documents

POLICY = b"# Access policy\n\nAccess to production is reviewed every quarter by its owner.\n"


def no_kick(_: uuid.UUID) -> None:
    """The test runs the coordinator and the jobs itself."""


@pytest.fixture
def on_postgres(
    postgres_url: str,
    tmp_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[None]:
    for name in LIFECYCLE_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LIFECYCLE_DATABASE_URL", postgres_url)
    monkeypatch.setenv("LIFECYCLE_HOME", str(tmp_path))
    reset_process_state()
    yield
    reset_process_state()


def _run_queued(
    run_id: uuid.UUID, service: JobService, prepare: Prepare | None = None
) -> list[JobRun]:
    with transaction() as session:
        requests = [
            JobRequest.model_validate(job.request)
            for job in session.scalars(
                select(Job).where(Job.run_id == run_id, Job.status == "queued")
            )
        ]
    outcomes = [
        run_job(Delivery(request, retries_left=True), service, prepare).outcome
        for request in requests
    ]
    coordinate(run_id)  # whatever the jobs' own transactions did not apply
    return outcomes


def _outcomes(owner: Actor, assessment_id: uuid.UUID) -> dict[str, tuple[str, str | None]]:
    return {o.filename: (o.status, o.error_code) for o in list_outcomes(owner, assessment_id)}


def _ingestion_attempts(run_id: uuid.UUID) -> list[tuple[int, str]]:
    with transaction() as session:
        rows = session.execute(
            select(StepExecution.attempt, StepExecution.status)
            .where(StepExecution.run_id == run_id, StepExecution.step == "ingest_documents")
            .order_by(StepExecution.attempt)
        ).all()
    return [(attempt, status) for attempt, status in rows]


def _scans_only_run(owner: Actor, ingest: JobService) -> tuple[uuid.UUID, uuid.UUID]:
    """A run back at wait_for_documents after its only document, a scan, had no text."""
    assessment = create_assessment(owner, "org-1", "Scans first").id
    upload_document(owner, assessment, "scan.pdf", files.image_only_pdf(), kick=no_kick)
    run = start_lifecycle(owner, assessment, f"start-{assessment}", kick=no_kick).id
    coordinate(run)
    assert _run_queued(run, ingest) == [JobRun.FAILED]
    waiting = get_run(owner, run)
    assert (waiting.current_step, waiting.status) == ("wait_for_documents", "waiting_for_input")
    assert _outcomes(owner, assessment) == {"scan.pdf": ("failed", "no_extractable_text")}
    return assessment, run


def _owner() -> Actor:
    return Actor(f"tenant-{uuid.uuid4().hex[:8]}", "user:owner@example.org")


def test_document_outcomes_are_kept_when_ingestion_fails(
    embedded: Path, sandbox: ParserSandbox
) -> None:
    owner = _owner()
    assessment, run = _scans_only_run(owner, functools.partial(ingest_documents, sandbox=sandbox))
    with transaction() as session:
        job = session.scalar(select(Job).where(Job.id == f"{run}:ingest_documents:1"))
        assert job is not None and job.status == "failed" and job.error is not None
    assert job.error["code"] == "no_extractable_text"
    assert get_run(owner, run).reason is not None
    assert "scan.pdf: [no_extractable_text]" in (get_run(owner, run).reason or "")


@pytest.mark.broker_matrix
@pytest.mark.integration
def test_a_readable_upload_during_a_doomed_ingestion_is_ingested(
    on_postgres: None, sandbox: ParserSandbox
) -> None:
    owner = _owner()
    ingest = functools.partial(ingest_documents, sandbox=sandbox)
    assessment, run = _scans_only_run(owner, ingest)

    upload_document(
        owner, assessment, "locked.pdf", files.pdf_bytes([["secret"]], password="pw"), kick=no_kick
    )
    coordinate(run)  # the upload starts ingestion attempt 2

    def read_then_upload(context: JobContext) -> JobResult:
        # Attempt 2 has read the documents (the encrypted PDF only) when the readable
        # file lands and its upload is decided, before the attempt's outcome.
        try:
            return ingest(context)
        finally:
            upload_document(owner, assessment, "policy.md", POLICY, kick=no_kick)
            coordinate(run)

    # Prepared as the worker prepares it: the documents are read before the job's body.
    prepare = functools.partial(prepare_documents, sandbox=sandbox)
    assert _run_queued(run, read_then_upload, prepare) == [JobRun.FAILED]
    assert _run_queued(run, ingest, prepare) == [JobRun.SUCCEEDED]

    assert _ingestion_attempts(run) == [(1, "failed"), (2, "failed"), (3, "completed")]
    assert get_run(owner, run).current_step == "index_kb"
    assert _outcomes(owner, assessment) == {
        "scan.pdf": ("failed", "no_extractable_text"),
        "locked.pdf": ("failed", "encrypted"),
        "policy.md": ("ingested", None),
    }
