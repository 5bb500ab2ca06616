"""ingest_soa fanned out: its `Prepare` writes the approved SoA's document and chunks in a
transaction of its own, embeds them in batches tracked in the database (any kb_index worker
may take one), and the job's transaction then finds both done: one document, one vector per
chunk, however often it runs."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import ChunkEmbedding, Document, DocumentChunk
from orchestrator.db.session import dispose_engines, transaction
from orchestrator.jobs import batches
from orchestrator.jobs.interface import JobContext
from orchestrator.service.progress import batch_progress
from tests.support.services import TENANT, USER, Kit, open_kit
from workers.ingestion import soa_document
from workers.ingestion.service import ingest_soa
from workers.ingestion.soa_document import prepare_soa


def _soa() -> dict[str, object]:
    rows = [
        {
            "requirement_id": f"CC{n}.1",
            "title": f"Requirement {n}",
            "applicable": True,
            "implementation_status": "implemented",
            "justification": f"Procedure {n} covers logical access for system {n}.",
        }
        for n in range(1, 8)
    ]
    return {"framework": "SOC 2", "requirements": rows}


@pytest.fixture
def kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kit]:
    """An assessment with an approved SoA, its database and storage as the settings say."""
    with open_kit(tmp_path) as kit:
        kit.add_artifact(ArtifactKind.SOA, _soa())
        kit.session.commit()
        monkeypatch.setenv("LIFECYCLE_DATABASE_URL", str(kit.session.get_bind().engine.url))
        monkeypatch.setenv("LIFECYCLE_STORAGE_DIR", str(tmp_path / "storage"))
        monkeypatch.setenv("LIFECYCLE_JOB_BATCH_ITEMS", "2")
        reset_settings()
        dispose_engines()
        yield kit
    dispose_engines()
    reset_settings()


def _counts(assessment_id: uuid.UUID) -> tuple[int, int, int]:
    with transaction() as session:

        def count(model: type[object]) -> int:
            return session.scalar(select(func.count()).select_from(model)) or 0

        vectors = session.scalar(
            select(func.count(func.distinct(ChunkEmbedding.chunk_id))).where(
                ChunkEmbedding.assessment_id == assessment_id
            )
        )
        return count(Document), count(DocumentChunk), int(vectors or 0)


def test_the_soa_is_written_then_embedded_in_batches_before_the_job(kit: Kit) -> None:
    request = kit.context(Step.INGEST_SOA).request
    ahead = prepare_soa(request)

    documents, chunks, vectors = _counts(kit.assessment.id)
    assert documents == 1 and chunks >= 4
    assert ahead.vectors == {} and ahead.embedded == vectors == chunks
    assert ahead.new_chunks == chunks
    [progress] = batch_progress(Actor(TENANT, USER), kit.run.id)
    assert progress.step == Step.INGEST_SOA.value
    size = batches.spread(chunks, 2)  # batches of 2, or fewer chunks for 8 batches
    assert progress.done == progress.total == -(-chunks // size)

    # The job's transaction finds the document, its chunks and vectors, and adds nothing.
    with transaction() as session:
        context = JobContext(request, session, kit.storage_dir / "storage", prepared=ahead)
        result = ingest_soa(context)
    assert _counts(kit.assessment.id) == (1, chunks, chunks)
    assert result.summary["embedded"] == result.summary["new_chunks"] == chunks
    assert result.summary["chunks"] == chunks
    with transaction() as session:
        document = session.scalars(select(Document)).one()
        assert (document.status, document.chunk_count) == ("ingested", chunks)
        assert document.filename == "soa-v1.md"

    # Prepared again (a redelivery): the same document, nothing embedded twice.
    again = prepare_soa(request)
    assert (again.embedded, again.new_chunks) == (0, 0)
    assert _counts(kit.assessment.id) == (1, chunks, chunks)


def test_a_copy_of_the_job_preparing_at_the_same_time_loses_the_race_cleanly(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A redelivered copy commits the same rows first: this preparation's insert conflicts,
    and writing again finds them."""
    request = kit.context(Step.INGEST_SOA).request
    real = soa_document.write_soa_document
    raced: list[bool] = []

    def racing(session: object, request: object, ahead: object) -> object:
        if not raced:
            raced.append(True)
            with transaction() as other:  # the other delivery wins
                real(other, request, ahead)  # type: ignore[arg-type]
            raise IntegrityError("INSERT INTO documents", {}, Exception("unique violation"))
        return real(session, request, ahead)  # type: ignore[arg-type]

    monkeypatch.setattr(soa_document, "write_soa_document", racing)
    ahead = prepare_soa(request)
    documents, chunks, vectors = _counts(kit.assessment.id)
    assert raced and documents == 1 and vectors == chunks > 0
    assert ahead.new_chunks == 0 and ahead.embedded == chunks
