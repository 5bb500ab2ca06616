"""index_kb fanned out into batches tracked in the database: a failed batch is retried
alone, a batch whose holder died is taken over when its lease lapses, every chunk gets one
vector, and the job's progress reads done/total."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.exc import OperationalError

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.jobs import JobRequest
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.batch_models import JobBatch
from orchestrator.db.models import ChunkEmbedding, DocumentChunk
from orchestrator.db.session import dispose_engines, transaction
from orchestrator.jobs import batches
from orchestrator.knowledge.embedder import HashingEmbedder, Vectors
from orchestrator.service.progress import batch_progress
from tests.support.services import TENANT, USER, add_standard_documents, job_request, open_kit
from workers.kb_index import fan_out

BATCH = 2
KitIds = tuple[uuid.UUID, uuid.UUID]


class FlakyEmbedder(HashingEmbedder):
    """Fails the first time it sees `poison`; counts how often it embedded each text."""

    def __init__(self, poison: str | None) -> None:
        super().__init__()
        self.poison = poison
        self.seen: Counter[str] = Counter()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.poison is not None and any(self.poison in text for text in texts):
            self.poison = None
            raise RuntimeError("embedding service hiccup")
        self.seen.update(texts)
        return super().embed(texts)


@pytest.fixture
def kit_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[uuid.UUID, uuid.UUID]]:
    """The kit's assessment (documents ingested, nothing embedded) and run."""
    with open_kit(tmp_path) as kit:
        add_standard_documents(kit)
        kit.run_step(Step.INGEST_DOCUMENTS)
        kit.session.commit()
        ids = kit.assessment.id, kit.run.id
        url = str(kit.session.get_bind().engine.url)
    monkeypatch.setenv("LIFECYCLE_DATABASE_URL", url)
    reset_settings()
    dispose_engines()
    yield ids
    dispose_engines()
    reset_settings()


@pytest.fixture
def assessment(kit_ids: KitIds) -> uuid.UUID:
    return kit_ids[0]


def _request(assessment_id: uuid.UUID, run_id: uuid.UUID | None = None) -> JobRequest:
    return job_request(Step.INDEX_KB, run_id or uuid.uuid4(), assessment_id)


def _batches(job_id: str) -> list[JobBatch]:
    with transaction() as session:
        rows = session.scalars(select(JobBatch).where(JobBatch.job_id == job_id))
        return sorted(rows, key=lambda b: b.seq)


def _vectors_per_chunk(assessment_id: uuid.UUID) -> tuple[int, set[int]]:
    with transaction() as session:
        chunks = session.scalar(
            select(func.count())
            .select_from(DocumentChunk)
            .where(DocumentChunk.assessment_id == assessment_id)
        )
        per_chunk = session.execute(
            select(ChunkEmbedding.chunk_id, func.count()).group_by(ChunkEmbedding.chunk_id)
        ).all()
    return int(chunks or 0), {int(count) for _, count in per_chunk} | {len(per_chunk)}


def _second_batch_text(assessment_id: uuid.UUID) -> str:
    with transaction() as session:
        ids = list(
            session.scalars(
                select(DocumentChunk.text)
                .where(DocumentChunk.assessment_id == assessment_id)
                .order_by(func.length(DocumentChunk.text), DocumentChunk.id)
            )
        )
    return ids[BATCH][:40]


def test_a_failed_batch_is_retried_alone_and_every_chunk_gets_one_vector(
    kit_ids: KitIds, monkeypatch: pytest.MonkeyPatch
) -> None:
    assessment, run_id = kit_ids
    embedder = FlakyEmbedder(poison=_second_batch_text(assessment))
    monkeypatch.setattr(fan_out, "default_embedder", lambda: embedder)
    request = _request(assessment, run_id)

    counts = fan_out.embed_in_batches(request, batch_size=BATCH)

    rows = _batches(request.job_id)
    chunks, per_chunk = _vectors_per_chunk(assessment)
    assert len(rows) == -(-chunks // BATCH) > 2
    assert {row.status for row in rows} == {"succeeded"}
    # The failing batch ran twice; every other batch once.
    assert [row.attempts for row in rows] == [1, 2] + [1] * (len(rows) - 2)
    assert rows[1].error is None
    assert counts.embedded == chunks
    assert per_chunk == {1, chunks}  # one vector per chunk, every chunk
    assert set(embedder.seen.values()) == {1}  # no text embedded twice after success
    # The run shows the step's progress: every batch done, none failed.
    [progress] = batch_progress(Actor(TENANT, USER), run_id)
    assert (progress.job_id, progress.step) == (request.job_id, "index_kb")
    assert (progress.done, progress.total, progress.failed) == (len(rows), len(rows), 0)


def test_a_batch_held_by_a_dead_worker_is_taken_over_when_its_lease_lapses(
    assessment: uuid.UUID, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = FlakyEmbedder(poison=None)
    monkeypatch.setattr(fan_out, "default_embedder", lambda: embedder)
    request = _request(assessment)
    with transaction() as session:
        todo = list(
            session.scalars(
                select(DocumentChunk.id)
                .where(DocumentChunk.assessment_id == assessment)
                .order_by(DocumentChunk.id)
            )
        )
    planned = batches.plan(
        request.job_id, request.run_id, request.tenant_id, "index_kb", todo, BATCH
    )
    # Another worker claimed the first batch and died; a second holds the second, alive.
    assert batches.claim(planned[0]) is not None
    held = batches.claim(planned[1])
    assert held is not None
    with transaction() as session:
        session.execute(
            update(JobBatch)
            .where(JobBatch.id == planned[0])
            .values(lease_until=utcnow() - timedelta(seconds=1))
        )
    assert batches.claim(planned[1]) is None  # a live lease is not taken

    # The live holder finishes its batch while the job drives the rest.
    assert batches.run_claimed(held, fan_out.embedding_work(assessment))
    fan_out.embed_in_batches(request, batch_size=BATCH)

    rows = _batches(request.job_id)
    assert {row.status for row in rows} == {"succeeded"}
    assert [row.attempts for row in rows][:2] == [2, 1]
    chunks, per_chunk = _vectors_per_chunk(assessment)
    assert per_chunk == {1, chunks}
    # The batch message that arrives after the work is done does nothing.
    body = {"assessment_id": str(assessment), "job_id": request.job_id, "batch_id": planned[2]}
    assert fan_out.embed_one_batch(body) == "taken"


def test_the_batch_size_is_a_setting(kit_ids: KitIds, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a size from its caller, the job cuts batches of LIFECYCLE_JOB_BATCH_ITEMS."""
    assessment, run_id = kit_ids
    monkeypatch.setattr(fan_out, "default_embedder", lambda: FlakyEmbedder(poison=None))
    monkeypatch.setenv("LIFECYCLE_JOB_BATCH_ITEMS", "3")
    reset_settings()
    request = _request(assessment, run_id)

    counts = fan_out.embed_in_batches(request)

    rows = _batches(request.job_id)
    chunks, _ = _vectors_per_chunk(assessment)
    size = batches.spread(chunks, 3)
    assert [len(row.items["ids"]) for row in rows][:-1] == [size] * (len(rows) - 1)
    assert len(rows) == -(-chunks // size) > 1
    assert counts.embedded == chunks
    # The longest chunks go first: the batches taken last are the quickest.
    lengths = _lengths([chunk for row in rows for chunk in row.items["ids"]])
    assert lengths == sorted(lengths, reverse=True) and lengths[0] > lengths[-1]


def test_few_chunks_are_cut_into_smaller_batches_for_the_workers_to_share() -> None:
    """A batch size that leaves fewer than MIN_BATCHES batches is cut down (the SoA's
    chunks were 2 batches, the second left to one worker); it never grows."""
    assert batches.spread(1000, 32) == 32
    assert batches.spread(256, 32) == 32  # exactly MIN_BATCHES batches of 32
    assert batches.spread(60, 32) == 8  # 8 batches, the last of 4
    assert -(-60 // batches.spread(60, 32)) == batches.MIN_BATCHES
    assert batches.spread(5, 32) == 1
    assert batches.spread(0, 32) == 1


def _lengths(chunk_ids: list[str]) -> list[int]:
    query = select(DocumentChunk.id, DocumentChunk.text).where(DocumentChunk.id.in_(chunk_ids))
    with transaction() as session:
        texts = {row.id: row.text for row in session.execute(query)}
    return [len(texts[chunk_id]) for chunk_id in chunk_ids]


def test_two_deliveries_planning_at_once_share_the_first_plan(
    assessment: uuid.UUID, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job's message sent twice (its confirm was lost) is delivered twice; both may find
    no plan and write one at the same moment. The second's rows collide with the first's:
    it goes on with the first plan instead of crashing."""
    request = _request(assessment)
    items = [f"chunk-{n}" for n in range(5)]
    first = batches.plan(request.job_id, request.run_id, TENANT, "index_kb", items, BATCH)
    # The second delivery looked before the first committed: it saw no plan.
    monkeypatch.setattr(batches, "_planned", lambda session, job_id: False)

    second = batches.plan(request.job_id, request.run_id, TENANT, "index_kb", items, BATCH)

    assert second == first
    assert [row.items["ids"] for row in _batches(request.job_id)] == [
        items[0:2],
        items[2:4],
        items[4:5],
    ]


def test_a_claim_the_database_outage_kept_is_given_back_when_the_job_comes_again(
    kit_ids: KitIds, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database goes away while a batch is worked on: its failure cannot be written, so
    the row still says `started` under a lease of minutes. The job's next delivery in this
    process gives the claim back first and takes the batch at once, instead of waiting for
    the lease to lapse (past its deadline, the job would fail for good)."""
    assessment, run_id = kit_ids
    request = _request(assessment, run_id)
    todo = [f"chunk-{n}" for n in range(3)]
    [first, *_] = batches.plan(request.job_id, run_id, TENANT, "index_kb", todo, BATCH)
    claimed = batches.claim(first)
    assert claimed is not None

    def outage(items: list[str]) -> batches.WriteResults:
        raise OperationalError("SELECT 1", {}, Exception("server closed the connection"))

    real_failed = batches._failed
    monkeypatch.setattr(batches, "_failed", lambda claimed, error: outage([]))
    with pytest.raises(OperationalError):
        batches.run_claimed(claimed, outage)
    assert [row.status for row in _batches(request.job_id)][0] == "started"
    monkeypatch.setattr(batches, "_failed", real_failed)  # the database is back

    done: list[list[str]] = []

    def work(items: list[str]) -> batches.WriteResults:
        done.append(items)
        return lambda session: None

    progress = batches.drive(request.job_id, work, timeout_s=30)

    assert (progress.done, progress.total) == (2, 2)
    assert done == [todo[0:2], todo[2:3]]
    rows = _batches(request.job_id)
    assert [row.attempts for row in rows] == [2, 1]
    assert rows[0].lease_until is None
