"""ingest_documents fanned out per batch of documents: each batch is checked and parsed by
whichever ingestion worker takes it, its outcomes kept in storage; the job reads them back
and stores the chunks as it did in one process. A failed batch is retried alone, a batch
another worker parsed is not parsed again, and the run shows the step's progress."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator.config.settings import get_settings, reset_settings
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.jobs import JobRequest
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.batch_models import JobBatch
from orchestrator.db.models import Document
from orchestrator.db.session import transaction
from orchestrator.formats.document_errors import DocumentErrorCode
from orchestrator.jobs import batches
from orchestrator.service.progress import batch_progress
from tests.support.services import (
    TENANT,
    USER,
    Kit,
    add_standard_documents,
    job_request,
    kit_database_for_this_process,
    open_kit,
)
from workers.ingestion import fan_out
from workers.ingestion.ahead import DocumentsAhead, parse_documents
from workers.ingestion.kept_outcomes import kept_path
from workers.ingestion.sandbox import ParserSandbox, Parsing
from workers.ingestion.service import ingest_documents


class CountingSandbox(ParserSandbox):
    """Counts each file it was asked to parse; fails once on the file named `poison`."""

    def __init__(self, poison: str | None = None) -> None:
        super().__init__()
        self.poison = poison
        self.parsed: Counter[str] = Counter()

    def parsing(self, files: Sequence[tuple[Path, str]]) -> Parsing:
        names = [path.name for path, _ in files]
        if self.poison is not None and self.poison in names:
            self.poison = None
            raise RuntimeError("parser host hiccup")
        self.parsed.update(names)
        return super().parsing(files)


@pytest.fixture
def kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kit]:
    """An assessment with the three standard documents and a corrupt PDF, uploaded."""
    monkeypatch.setenv("LIFECYCLE_STORAGE_DIR", str(tmp_path / "storage"))
    monkeypatch.setenv("LIFECYCLE_JOB_BATCH_DOCUMENTS", "1")
    reset_settings()
    with open_kit(tmp_path) as kit:
        add_standard_documents(kit)
        kit.add_document("broken.pdf", b"%PDF-1.7\n this is no pdf", media_type="application/pdf")
        with kit_database_for_this_process(kit, monkeypatch):
            yield kit


def _request(kit: Kit) -> JobRequest:
    return job_request(Step.INGEST_DOCUMENTS, kit.run.id, kit.assessment.id)


def _documents(kit: Kit) -> list[Document]:
    with transaction() as session:
        return list(
            session.scalars(
                select(Document)
                .where(Document.assessment_id == kit.assessment.id)
                .order_by(Document.created_at, Document.id)
            )
        )


def _batches(job_id: str) -> list[JobBatch]:
    with transaction() as session:
        rows = session.scalars(select(JobBatch).where(JobBatch.job_id == job_id))
        return sorted(rows, key=lambda b: b.seq)


def _same_outcomes(fanned: DocumentsAhead, whole: DocumentsAhead) -> None:
    assert fanned.by_id.keys() == whole.by_id.keys()
    for key, one in whole.by_id.items():
        other = fanned.by_id[key]
        assert other.sha256 == one.sha256
        assert other.document == one.document
        assert [(c.heading_path, c.text) for c in other.chunks] == [
            (c.heading_path, c.text) for c in one.chunks
        ]
        assert (other.error and other.error.code) == (one.error and one.error.code)


def test_each_document_is_parsed_in_its_own_batch_and_the_job_gets_what_one_process_would(
    kit: Kit,
) -> None:
    request = _request(kit)
    documents = _documents(kit)
    sandbox = CountingSandbox(poison="x")

    fanned = fan_out.prepare_documents(request, sandbox)

    rows = _batches(request.job_id)
    assert [row.items["ids"] for row in rows] == [[str(d.id)] for d in documents]
    assert {row.status for row in rows} == {"succeeded"}
    # Each outcome kept where any worker finds it, the corrupt PDF's typed reason too.
    for document in documents:
        assert kept_path(get_settings().resolved_storage_dir, document, sandbox.limits).is_file()
    _same_outcomes(fanned, parse_documents(documents, ParserSandbox()))
    broken = next(d for d in documents if d.filename == "broken.pdf")
    error = fanned.by_id[broken.id].error
    assert error is not None and error.code == DocumentErrorCode.CORRUPT_FILE
    # The job's transaction stores them as before: three documents ingested, one failed.
    kit.session.expire_all()
    context = dataclasses.replace(kit.context(Step.INGEST_DOCUMENTS), prepared=fanned)
    result = ingest_documents(context)
    kit.session.commit()
    assert (result.summary["ingested"], result.summary["failed"]) == (3, 1)
    assert result.summary["errors"] == {"corrupt_file": 1}
    [progress] = batch_progress(Actor(TENANT, USER), kit.run.id)
    assert (progress.step, progress.done, progress.total, progress.failed) == (
        "ingest_documents",
        len(documents),
        len(documents),
        0,
    )


def test_a_failed_batch_is_retried_alone_and_no_document_is_parsed_twice(kit: Kit) -> None:
    request = _request(kit)
    sandbox = CountingSandbox(poison="")  # set below: the second document's stored name
    second = _documents(kit)[1]
    sandbox.poison = Path(second.storage_path).name

    fan_out.prepare_documents(request, sandbox)

    rows = _batches(request.job_id)
    assert [row.attempts for row in rows] == [1, 2, 1, 1]
    assert {row.status for row in rows} == {"succeeded"}
    assert set(sandbox.parsed.values()) == {1}
    assert len(sandbox.parsed) == len(rows)  # every file reached the parser, once


def test_a_batch_another_worker_parsed_is_read_back_not_parsed_again(kit: Kit) -> None:
    request = _request(kit)
    documents = _documents(kit)
    planned = batches.plan(
        request.job_id,
        request.run_id,
        request.tenant_id,
        request.step.value,
        [str(d.id) for d in documents],
        1,
    )
    # Another ingestion worker is offered the second batch and parses it first.
    body = {"job_id": request.job_id, "batch_id": planned[1]}
    assert fan_out.parse_one_batch(body) == "succeeded"
    assert fan_out.parse_one_batch(body) == "taken"  # a second delivery does nothing
    sandbox = CountingSandbox()

    ahead = fan_out.prepare_documents(request, sandbox)

    assert set(ahead.by_id) == {d.id for d in documents}
    assert Path(documents[1].storage_path).name not in sandbox.parsed
    assert sum(sandbox.parsed.values()) == len(documents) - 1


def test_an_unreadable_or_missing_kept_outcome_is_parsed_again(kit: Kit) -> None:
    request = _request(kit)
    documents = _documents(kit)
    sandbox = CountingSandbox()
    fan_out.prepare_documents(request, sandbox)
    storage = get_settings().resolved_storage_dir
    kept_path(storage, documents[0], sandbox.limits).write_text("{not json")
    kept_path(storage, documents[1], sandbox.limits).unlink()

    again = fan_out.prepare_documents(
        JobRequest.model_validate({**_request(kit).model_dump(), "job_id": "another-job"}),
        sandbox,
    )

    _same_outcomes(again, parse_documents(documents, ParserSandbox()))


def test_a_missing_file_is_checked_again_not_remembered(kit: Kit) -> None:
    request = _request(kit)
    documents = _documents(kit)
    first = documents[0]
    moved = Path(first.storage_path).with_suffix(".away")
    Path(first.storage_path).rename(moved)
    sandbox = CountingSandbox()

    ahead = fan_out.prepare_documents(request, sandbox)

    error = ahead.by_id[first.id].error
    assert error is not None and error.code == DocumentErrorCode.FILE_MISSING
    assert not kept_path(get_settings().resolved_storage_dir, first, sandbox.limits).exists()
    moved.rename(first.storage_path)  # restored: the next job parses it
    retry = fan_out.prepare_documents(
        JobRequest.model_validate({**request.model_dump(), "job_id": "the-retry"}), sandbox
    )
    assert retry.by_id[first.id].document is not None
