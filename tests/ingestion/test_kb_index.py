"""The hashing embedder, incremental indexing and cosine search."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from orchestrator.config.settings import get_settings
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import ChunkEmbedding
from orchestrator.knowledge.embedder import Embedder, HashingEmbedder, features, stem
from orchestrator.knowledge.provenance import SYSTEM_UPLOADER
from orchestrator.knowledge.vectors import KnowledgeBase, index_missing, search
from tests.support.services import (
    ACCESS_POLICY,
    BACKUP_STANDARD,
    INCIDENT_PLAN,
    Kit,
    add_standard_documents,
    open_kit,
)
from workers.kb_index.service import index_kb


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    with open_kit(tmp_path) as kit:
        yield kit


def test_hashing_embedder_is_deterministic_normalised_and_sized_by_settings() -> None:
    embedder = HashingEmbedder()
    assert embedder.dimensions == get_settings().embedding_dim
    assert isinstance(embedder, Embedder)
    texts = ["Multi-factor authentication for remote access", "Backups are restored", ""]
    first, second = embedder.embed(texts), HashingEmbedder().embed(texts)
    assert first.dtype == np.float32 and first.shape == (3, embedder.dimensions)
    assert np.array_equal(first, second)
    assert np.allclose(np.linalg.norm(first[:2], axis=1), 1.0)
    assert not first[2].any()  # no words: a zero vector, not NaN


def test_features_are_lowercased_stemmed_unigrams_and_bigrams() -> None:
    grams = features("The Backups are TESTED; backup tests")
    assert grams["backup"] == 2 and grams["test"] == 2
    assert grams["backup test"] == 2  # "Backups TESTED" and "backup tests"
    assert "the" not in grams  # stop words carry no signal
    assert stem("restoration") == stem("restore") == "restor"


def test_similar_texts_score_higher_than_unrelated_ones() -> None:
    vectors = HashingEmbedder(1024).embed(
        [
            "multi-factor authentication is required for remote access",
            "remote access requires multi-factor authentication",
            "the cafeteria serves lunch at noon",
        ]
    )
    assert vectors[0] @ vectors[1] > 0.5
    assert abs(vectors[0] @ vectors[2]) < vectors[0] @ vectors[1] / 2


def test_index_kb_embeds_only_new_chunks(kit: Kit) -> None:
    kit.add_document("access.md", ACCESS_POLICY)
    kit.run_step(Step.INGEST_DOCUMENTS)
    first = kit.run_step(Step.INDEX_KB)
    assert first.summary == {
        "embedded": 2,
        "already_indexed": 0,
        "model": "hashing-blake2b-v1",
        "dimensions": get_settings().embedding_dim,
    }
    stored = kit.session.scalars(select(ChunkEmbedding)).all()
    assert all(len(row.vector) == 4 * row.dimensions for row in stored)

    again = kit.run_step(Step.INDEX_KB)
    assert (again.summary["embedded"], again.summary["already_indexed"]) == (0, 2)

    kit.add_document("plan.md", INCIDENT_PLAN)
    kit.run_step(Step.INGEST_DOCUMENTS)
    third = kit.run_step(Step.INDEX_KB)
    assert (third.summary["embedded"], third.summary["already_indexed"]) == (2, 2)
    assert kit.count(ChunkEmbedding) == 4


def test_indexing_works_in_batches(kit: Kit) -> None:
    body = "\n\n".join(f"## Section {n}\nParagraph number {n} about topic{n}." for n in range(7))
    kit.add_document("many.md", "# Many\n" + body)
    kit.run_step(Step.INGEST_DOCUMENTS)
    counts = index_missing(kit.session, kit.assessment.id, HashingEmbedder(), batch_size=3)
    assert counts.embedded == 7
    assert kit.count(ChunkEmbedding) == 7


def test_vectors_of_another_model_are_replaced_not_duplicated(kit: Kit) -> None:
    kit.add_document("access.md", ACCESS_POLICY)
    kit.run_step(Step.INGEST_DOCUMENTS)
    index_missing(kit.session, kit.assessment.id, HashingEmbedder(64))
    counts = index_missing(kit.session, kit.assessment.id, HashingEmbedder(128))
    assert counts.embedded == 2
    rows = kit.session.scalars(select(ChunkEmbedding)).all()
    assert len(rows) == 2 and {row.dimensions for row in rows} == {128}


def test_search_ranks_the_relevant_chunk_first(kit: Kit) -> None:
    add_standard_documents(kit)
    kit.run_step(Step.INGEST_DOCUMENTS)
    kit.run_step(Step.INDEX_KB)
    hits = search(kit.session, kit.assessment.id, "multi-factor authentication MFA", k=3)
    assert hits[0].filename == "access-control-policy.md"
    assert hits[0].heading_path == "Access Control Policy > Authentication"
    assert "authenticator app" in hits[0].excerpt
    assert hits == sorted(hits, key=lambda hit: -hit.score)

    backup = search(kit.session, kit.assessment.id, "restore test of backups", k=1)
    assert backup[0].filename == "backup-standard.txt"
    assert backup[0].heading_path == "BACKUP STANDARD > Backups"
    assert search(kit.session, kit.assessment.id, "cafeteria lunch parking") == []


def test_search_is_per_assessment_and_can_leave_out_system_documents(kit: Kit) -> None:
    kit.add_document("backup.txt", BACKUP_STANDARD, media_type="text/plain")
    kit.add_document(
        "soa-v1.md",
        "# SoA\n## BCD-11 Data Backups\nApplicable: backups.",
        uploaded_by=SYSTEM_UPLOADER,
    )
    kit.run_step(Step.INGEST_DOCUMENTS)
    kit.run_step(Step.INDEX_KB)
    everything = KnowledgeBase.load(kit.session, kit.assessment.id)
    evidence = KnowledgeBase.load(kit.session, kit.assessment.id, evidence_only=True)
    assert everything.size == 2 and evidence.size == 1
    assert "soa-v1.md" in {h.filename for h in everything.search("data backups", k=5)}
    assert {h.filename for h in evidence.search("data backups", k=5)} == {"backup.txt"}
    assert search(kit.session, uuid.uuid4(), "backups") == []


def test_index_kb_accepts_another_embedder(kit: Kit) -> None:
    kit.add_document("access.md", ACCESS_POLICY)
    kit.run_step(Step.INGEST_DOCUMENTS)
    result = index_kb(kit.context(Step.INDEX_KB), embedder=HashingEmbedder(32))
    assert result.summary["dimensions"] == 32
