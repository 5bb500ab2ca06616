"""Chunk vectors in the database, and cosine search over them in numpy.

Vectors are float32 bytes in `chunk_embeddings`, so the same code serves SQLite and
PostgreSQL (no pgvector). Search loads one assessment's vectors: a KB is per assessment.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.db.ingestion_models import ChunkProvenance
from orchestrator.db.models import ChunkEmbedding, Document, DocumentChunk
from orchestrator.db.session import read_transaction, transaction
from orchestrator.db.sql import insert_for
from orchestrator.knowledge.embedder import Embedder, Rescorer, Vectors, default_embedder
from orchestrator.knowledge.provenance import SYSTEM_UPLOADER

# Row's type parameters differ between SQLAlchemy 2.0 and 2.1: rows stay loosely typed.
_ChunkRow = Any

BATCH_SIZE = 256
EXCERPT_CHARS = 300
RERANK_POOL = 50
MIN_SCORE = 1e-6
_DTYPE = np.dtype("<f4")  # fixed byte order: vectors read back the same on any host


@dataclass(frozen=True)
class IndexCounts:
    embedded: int
    already_indexed: int


@dataclass(frozen=True)
class SearchHit:
    chunk_id: str
    document_id: str
    filename: str
    heading_path: str
    excerpt: str
    score: float
    page_start: int | None = None
    """First and last page of the passage, for documents with pages (PDF)."""
    page_end: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def passages_query(*extra: Any) -> Select[Any]:
    """Chunks as citable passages: text, heading, document and pages (`extra` columns
    too), for the retrievers and the KB search alike."""
    return (
        select(
            DocumentChunk.id,
            DocumentChunk.document_id,
            DocumentChunk.heading_path,
            DocumentChunk.text,
            Document.filename,
            ChunkProvenance.page_start,
            ChunkProvenance.page_end,
            *extra,
        )
        .join(Document, Document.id == DocumentChunk.document_id)
        .outerjoin(ChunkProvenance, ChunkProvenance.chunk_id == DocumentChunk.id)
    )


def embedding_text(heading_path: str, text: str) -> str:
    # Headings name the topic ("Access control > MFA"): they belong in the vector.
    return f"{heading_path}\n{text}" if heading_path else text


def index_missing(
    session: Session,
    assessment_id: uuid.UUID,
    embedder: Embedder | None = None,
    *,
    document_id: uuid.UUID | None = None,
    batch_size: int = BATCH_SIZE,
) -> IndexCounts:
    """Embed the assessment's chunks that have no vector from this embedder yet."""
    embedder = embedder or default_embedder()
    todo, total = _pending(session, assessment_id, embedder, document_id)
    for batch in _batches(todo, batch_size):
        chunks = session.execute(_texts(batch)).all()
        _store(session, assessment_id, embedder, chunks, _embed(embedder, chunks))
    return IndexCounts(embedded=len(todo), already_indexed=total - len(todo))


def embed_ahead(
    assessment_id: uuid.UUID, embedder: Embedder | None = None, batch_size: int = BATCH_SIZE
) -> IndexCounts:
    """`index_missing` outside any long transaction: the chunks still to embed are read in
    one short transaction, each batch is embedded with no transaction open and written in
    another."""
    embedder = embedder or default_embedder()
    with read_transaction() as session:
        todo, total = _pending(session, assessment_id, embedder)
    for batch in _batches(todo, batch_size):
        with read_transaction() as session:
            chunks = session.execute(_texts(batch)).all()
        vectors = _embed(embedder, chunks)
        with transaction() as session:
            _store(session, assessment_id, embedder, chunks, vectors)
    return IndexCounts(embedded=len(todo), already_indexed=total - len(todo))


def embed_chunks(
    assessment_id: uuid.UUID, embedder: Embedder, chunk_ids: list[str]
) -> Callable[[Session], None]:
    """Embed these chunks now, outside any transaction; returns what stores their vectors
    (replacing any, never duplicating) in the caller's transaction (one batch of a job
    that fans out)."""
    with read_transaction() as session:
        chunks = session.execute(_texts(chunk_ids)).all()
    vectors = _embed(embedder, chunks)

    def write(session: Session) -> None:
        _store(session, assessment_id, embedder, chunks, vectors)

    return write


def pending_chunks(
    session: Session,
    assessment_id: uuid.UUID,
    embedder: Embedder | None = None,
    document_id: uuid.UUID | None = None,
) -> list[str]:
    """The ids of the chunks still without a vector from this embedder."""
    return _pending(session, assessment_id, embedder or default_embedder(), document_id)[0]


def store_vectors(
    session: Session,
    assessment_id: uuid.UUID,
    embedder: Embedder,
    vectors: dict[str, Any],
) -> int:
    """Store vectors computed ahead (by chunk id), for the chunks that still lack one."""
    todo = [
        chunk_id
        for chunk_id in pending_chunks(session, assessment_id, embedder)
        if chunk_id in vectors
    ]
    for batch in _batches(todo, BATCH_SIZE):
        rows = [_Stored(chunk_id) for chunk_id in batch]
        _store(session, assessment_id, embedder, rows, np.stack([vectors[c] for c in batch]))
    return len(todo)


@dataclass(frozen=True)
class _Stored:
    id: str


def _pending(
    session: Session,
    assessment_id: uuid.UUID,
    embedder: Embedder,
    document_id: uuid.UUID | None = None,
) -> tuple[list[str], int]:
    """The chunks without a vector from this embedder (model and width), and how many
    chunks there are: longest first, so a batch holds texts of like length (a model pads
    a batch to its longest: in id order, batches of 32 took 2.4 times as long), and the
    batches taken last, by whichever workers are free, are the quickest (shortest first,
    index_kb's last batch took four times its first, and the SoA's second batch was 7 s of
    ingest_soa's 7.7 while the other worker waited)."""
    query = (
        select(DocumentChunk.id, ChunkEmbedding.model, ChunkEmbedding.dimensions)
        .outerjoin(ChunkEmbedding, ChunkEmbedding.chunk_id == DocumentChunk.id)
        .where(DocumentChunk.assessment_id == assessment_id)
        .order_by(func.length(DocumentChunk.text).desc(), DocumentChunk.id)
    )
    if document_id is not None:
        query = query.where(DocumentChunk.document_id == document_id)
    rows = session.execute(query).all()
    current = (embedder.name, embedder.dimensions)
    return [row.id for row in rows if (row.model, row.dimensions) != current], len(rows)


def _texts(chunk_ids: list[str]) -> Any:
    return select(DocumentChunk.id, DocumentChunk.heading_path, DocumentChunk.text).where(
        DocumentChunk.id.in_(chunk_ids)
    )


def _embed(embedder: Embedder, chunks: Sequence[Any]) -> Vectors:
    return embedder.embed([embedding_text(c.heading_path, c.text) for c in chunks])


def _store(
    session: Session,
    assessment_id: uuid.UUID,
    embedder: Embedder,
    chunks: Sequence[Any],
    vectors: Vectors,
) -> None:
    ids = [c.id for c in chunks]
    now = utcnow()
    rows = sorted(
        (
            {
                "chunk_id": chunk_id,
                "assessment_id": assessment_id,
                "model": embedder.name,
                "dimensions": embedder.dimensions,
                "vector": np.asarray(vector, dtype=_DTYPE).tobytes(),
                "created_at": now,
            }
            for chunk_id, vector in zip(ids, vectors, strict=True)
        ),
        key=lambda row: str(row["chunk_id"]),  # one order for every writer: no deadlock
    )
    if not rows:
        return
    # A vector from another model or width is not comparable, and one another worker wrote
    # meanwhile (a reassessment's index while a run's job embeds the same new chunks) is
    # the same: either is replaced, never duplicated.
    upsert = insert_for(session, ChunkEmbedding)
    upsert = upsert.on_conflict_do_update(
        index_elements=["chunk_id"],
        set_={
            name: upsert.excluded[name]
            for name in ("assessment_id", "model", "dimensions", "vector", "created_at")
        },
    )
    session.execute(upsert, rows)  # one bulk statement per batch


def _batches(items: Sequence[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


class KnowledgeBase:
    """One assessment's vectors in memory: load once, search many times."""

    def __init__(
        self, session: Session, embedder: Embedder, chunk_ids: list[str], matrix: Vectors
    ) -> None:
        self._session = session
        self._embedder = embedder
        self._chunk_ids = chunk_ids
        self._matrix = matrix
        self._row_cache: dict[str, _ChunkRow] = {}

    @classmethod
    def load(
        cls,
        session: Session,
        assessment_id: uuid.UUID,
        embedder: Embedder | None = None,
        *,
        evidence_only: bool = False,
    ) -> KnowledgeBase:
        """`evidence_only` leaves out documents the fleet wrote itself (the SoA): a
        statement that a control applies is no evidence that it is implemented."""
        embedder = embedder or default_embedder()
        query = (
            select(ChunkEmbedding.chunk_id, ChunkEmbedding.vector)
            .where(
                ChunkEmbedding.assessment_id == assessment_id,
                ChunkEmbedding.model == embedder.name,
                ChunkEmbedding.dimensions == embedder.dimensions,
            )
            .order_by(ChunkEmbedding.chunk_id)
        )
        if evidence_only:
            query = (
                query.join(DocumentChunk, DocumentChunk.id == ChunkEmbedding.chunk_id)
                .join(Document, Document.id == DocumentChunk.document_id)
                .where(Document.uploaded_by != SYSTEM_UPLOADER)
            )
        rows = session.execute(query).all()
        matrix = np.frombuffer(b"".join(row.vector for row in rows), dtype=_DTYPE)
        matrix = matrix.reshape(len(rows), embedder.dimensions)
        return cls(session, embedder, [row.chunk_id for row in rows], matrix)

    @classmethod
    def computed(
        cls,
        session: Session,
        assessment_id: uuid.UUID,
        embedder: Embedder,
        *,
        evidence_only: bool = False,
    ) -> KnowledgeBase:
        """Vectors computed now rather than read: for a cheap embedder (hashing) that is
        not the one the KB is stored with, e.g. a quick triage before the real analysis."""
        query = (
            select(DocumentChunk.id, DocumentChunk.heading_path, DocumentChunk.text)
            .where(DocumentChunk.assessment_id == assessment_id)
            .order_by(DocumentChunk.id)
        )
        if evidence_only:
            query = query.join(Document, Document.id == DocumentChunk.document_id).where(
                Document.uploaded_by != SYSTEM_UPLOADER
            )
        rows = session.execute(query).all()
        matrix = embedder.embed([embedding_text(r.heading_path, r.text) for r in rows])
        return cls(session, embedder, [r.id for r in rows], matrix)

    @property
    def size(self) -> int:
        return len(self._chunk_ids)

    def search(self, query: str, k: int = 5) -> list[SearchHit]:
        """The k chunks most similar to `query` (cosine), best first; none unrelated.

        Vectors pick the candidates. An embedder that can score exactly (the hashing
        one) then re-scores a wider pool, so hash collisions neither rank nor score.
        """
        if self.size == 0 or k <= 0:
            return []
        scores = self._matrix @ self._embedder.embed([query])[0]
        rescorer = self._embedder if isinstance(self._embedder, Rescorer) else None
        pool = max(k * 10, RERANK_POOL) if rescorer else k
        # Stable sort over id-ordered rows: equal scores always rank the same way.
        order = np.argsort(-scores, kind="stable")[:pool]
        ranked = [(self._chunk_ids[i], float(scores[i])) for i in order]
        rows = self._rows([chunk_id for chunk_id, _ in ranked])
        if rescorer is not None:
            texts = [embedding_text(rows[cid].heading_path, rows[cid].text) for cid, _ in ranked]
            exact = rescorer.rescore(query, texts)
            ranked = sorted(
                ((cid, score) for (cid, _), score in zip(ranked, exact, strict=True)),
                key=lambda pair: (-pair[1], pair[0]),
            )
        return [_hit(rows[cid], score) for cid, score in ranked[:k] if score > MIN_SCORE]

    def _rows(self, chunk_ids: list[str]) -> dict[str, _ChunkRow]:
        """Chunk rows with provenance, fetched once per KB: many queries meet the same."""
        missing = [chunk_id for chunk_id in chunk_ids if chunk_id not in self._row_cache]
        if missing:
            self._row_cache.update(self._fetch(missing))
        return {
            chunk_id: self._row_cache[chunk_id]
            for chunk_id in chunk_ids
            if chunk_id in self._row_cache
        }

    def _fetch(self, chunk_ids: list[str]) -> dict[str, _ChunkRow]:
        rows = self._session.execute(passages_query().where(DocumentChunk.id.in_(chunk_ids))).all()
        return {row.id: row for row in rows}


def _hit(row: _ChunkRow, score: float) -> SearchHit:
    return SearchHit(
        chunk_id=row.id,
        document_id=str(row.document_id),
        filename=row.filename,
        heading_path=row.heading_path,
        excerpt=excerpt(row.text),
        score=round(score, 4),
        page_start=row.page_start,
        page_end=row.page_end,
    )


def search(
    session: Session,
    assessment_id: uuid.UUID,
    query: str,
    k: int = 5,
    *,
    embedder: Embedder | None = None,
    evidence_only: bool = False,
) -> list[SearchHit]:
    """One-off search; for many queries, load a `KnowledgeBase` once."""
    kb = KnowledgeBase.load(session, assessment_id, embedder, evidence_only=evidence_only)
    return kb.search(query, k)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return f"{cut}…"
