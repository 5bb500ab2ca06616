"""Each heavy job delivered again with the same job id (after its first delivery
committed, or after it died before committing) adds no chunk, vector, artifact or file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.ingestion_models import ChunkProvenance, DocumentOutcome
from orchestrator.db.models import Artifact, ChunkEmbedding, Document, DocumentChunk
from orchestrator.db.report_models import ReportExport
from orchestrator.formats import media
from orchestrator.jobs.interface import JobContext, JobResult
from orchestrator.lifecycle.definition import STEP_SPECS
from tests.support import documents as files
from tests.support.services import (
    PIPELINE,
    SERVICES,
    SMALL_FRAMEWORK,
    Kit,
    add_standard_documents,
    open_kit,
)

TABLES = (
    Document,
    DocumentChunk,
    ChunkProvenance,
    DocumentOutcome,
    ChunkEmbedding,
    Artifact,
    ReportExport,
)


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    with open_kit(tmp_path) as kit:
        kit.framework = SMALL_FRAMEWORK  # the report renders three times here
        add_standard_documents(kit)
        kit.add_document(
            "policy.pdf",
            files.pdf_bytes(
                [["1 Backups", "Backups run nightly."], ["2 Restores", "Restores are tested."]]
            ),
            media_type=media.PDF,
        )
        kit.add_document("broken.docx", b"PK\x03\x04 not really", media_type=media.DOCX)
        kit.session.commit()
        yield kit


def _snapshot(kit: Kit) -> dict[str, Any]:
    stored = sorted(
        p.relative_to(kit.storage_dir)
        for p in kit.storage_dir.rglob("*")
        if p.is_file() and p.suffix != ".db"
    )
    return {"rows": {table.__tablename__: kit.count(table) for table in TABLES}, "files": stored}


def _deliver_twice(kit: Kit, step: Step, service: Callable[[JobContext], JobResult]) -> None:
    context = kit.context(step, job_id=f"job-{step.value}")
    service(context)
    kit.session.rollback()  # the first delivery died before its commit
    first = service(context)
    kit.session.commit()
    before = _snapshot(kit)
    again = service(context)  # delivered again after it committed
    kit.session.commit()
    assert _snapshot(kit) == before, step
    assert again.artifact == first.artifact, step
    if step in (Step.INGEST_DOCUMENTS, Step.CREATE_REPORT):
        assert again.summary == first.summary, step  # whole-assessment figures
    else:
        assert again.summary["embedded"] == 0, step  # this delivery embedded nothing


def test_every_heavy_job_is_idempotent_by_job_id(kit: Kit) -> None:
    heavy = {Step.INGEST_DOCUMENTS, Step.INDEX_KB, Step.INGEST_SOA, Step.CREATE_REPORT}
    for step in PIPELINE:
        service = SERVICES[kit.context(step).request.kind]
        if step in heavy:
            _deliver_twice(kit, step, service)
        else:
            kit.run_step(step)
        produced = STEP_SPECS[step].produces
        if produced is not None:
            kit.approve(produced)
            kit.session.commit()
    counts = _snapshot(kit)["rows"]
    assert counts["document_chunks"] == counts["chunk_embeddings"] > 0
    assert counts["chunk_provenance"] == 2  # the PDF's chunks know their pages
    assert counts["document_outcomes"] == counts["documents"] == 6
    # Every export the report lists (PDF, DOCX, JSON, the CSV and XLSX tables, OSCAL),
    # each rendered and recorded once though the job ran twice.
    kinds = [e["kind"] for e in kit.content(ArtifactKind.REPORT)["exports"]]
    assert len(kinds) == len(set(kinds)) >= 13
    assert counts["report_exports"] == len(kinds)
