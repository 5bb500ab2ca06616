"""Embedding runs before a job's transaction, in short transactions of its own: while a
batch is being embedded (minutes for a large KB on CPU), the database stays writable.

On SQLite every transaction takes the database's one write lock (BEGIN IMMEDIATE), so a
job that embedded inside its transaction would make every upload, signal and approval
wait for it, and fail after the 30 s busy timeout.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import Assessment, ChunkEmbedding
from orchestrator.db.session import dispose_engines, transaction
from orchestrator.knowledge.embedder import HashingEmbedder, Vectors
from orchestrator.knowledge.vectors import IndexCounts, embed_ahead
from tests.support.polling import scaled
from tests.support.services import add_standard_documents, open_kit


class HeldEmbedder(HashingEmbedder):
    """Embeds only once the test lets it: the test writes while a batch is in hand."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.entered.set()
        if not self.release.wait(scaled(60)):
            raise TimeoutError("the test never released the embedder")
        return super().embed(texts)


def test_the_database_stays_writable_while_chunks_are_embedded_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_kit(tmp_path) as kit:
        add_standard_documents(kit)
        kit.run_step(Step.INGEST_DOCUMENTS)
        kit.session.commit()
        assessment_id = kit.assessment.id
        url = str(kit.session.get_bind().engine.url)
    monkeypatch.setenv("LIFECYCLE_DATABASE_URL", url)
    reset_settings()
    dispose_engines()
    embedder = HeldEmbedder()
    done: list[IndexCounts] = []
    worker = threading.Thread(
        target=lambda: done.append(embed_ahead(assessment_id, embedder, batch_size=2))
    )
    worker.start()
    try:
        assert embedder.entered.wait(scaled(30)), "embed_ahead never reached the embedder"
        # A write (what an upload or a signal does) while the batch is in hand: it would
        # wait for the write lock, and fail after the busy timeout, if a transaction held it.
        with transaction() as session:
            session.execute(
                update(Assessment).where(Assessment.id == assessment_id).values(name="renamed")
            )
    finally:
        embedder.release.set()
        worker.join(scaled(60))
    assert done, "embed_ahead did not finish"
    with transaction() as session:
        stored = session.scalar(select(func.count()).select_from(ChunkEmbedding)) or 0
        name = session.scalar(select(Assessment.name).where(Assessment.id == assessment_id))
    assert done[0].embedded == stored > 2  # several batches, every chunk embedded once
    assert name == "renamed"
    # A second pass (a redelivered job) finds nothing left to embed.
    embedder.release.set()
    assert embed_ahead(assessment_id, embedder, batch_size=2).embedded == 0
    dispose_engines()
