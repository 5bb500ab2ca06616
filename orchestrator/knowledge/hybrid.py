"""Hybrid evidence retrieval: BM25 and dense vectors, fused by reciprocal rank.

A requirement is asked as a facet: the texts of its linked SCF controls (name and
description, question, methods to comply, evidence artifact names), with a weight per
query term. It is ranked twice, lexically (BM25 over heading path and text) and densely
(the best cosine between the passage and any of the texts); the two rankings are fused by
reciprocal rank (RRF), so neither score scale dominates and a passage both methods place
high wins. Several facets fuse the same way. Lexical-only and dense-only rankings are the
same computation with one method, for comparison.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy.orm import Session

from orchestrator.contracts.documents import CURRENT
from orchestrator.db.models import ChunkEmbedding, Document, DocumentChunk
from orchestrator.knowledge.embedder import Embedder, Rescorer, Vectors, default_embedder
from orchestrator.knowledge.lexical import BM25
from orchestrator.knowledge.provenance import SYSTEM_UPLOADER
from orchestrator.knowledge.vectors import (
    embedding_text,
    excerpt,
    index_missing,
    passages_query,
)

STORED = np.dtype("<f4")  # how orchestrator.knowledge.vectors stores a vector
RRF_K = 60  # the usual constant: ranks 1 and 2 differ little, top 10 and top 100 a lot
CANDIDATES = 100  # ranks past this add nothing to a fusion of top passages


class Method(StrEnum):
    FUSED = "fused"
    LEXICAL = "lexical"
    DENSE = "dense"


@dataclass(frozen=True)
class Passage:
    chunk_id: str
    document_id: str
    filename: str
    heading_path: str
    text: str
    page_start: int | None
    page_end: int | None


@dataclass(frozen=True)
class Facet:
    """One way to ask for a requirement: text for BM25, vectors (rows) for cosine."""

    text: str
    vectors: Vectors
    weight: Callable[[str], float] | None = None  # a query term's specificity
    texts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ranked:
    passage: Passage
    score: float  # the fused (or single-method) RRF score
    similarity: float  # best cosine to any facet text
    lexical_rank: int | None  # 1-based best rank over facets; None if no query term matched
    dense_rank: int

    def citation(self) -> dict[str, Any]:
        p = self.passage
        pages = (
            ([p.page_start] if p.page_start == p.page_end else [p.page_start, p.page_end])
            if p.page_start is not None
            else []
        )
        return {
            "document": p.filename,
            "filename": p.filename,
            "document_id": p.document_id,
            "page_start": p.page_start,
            "page_end": p.page_end,
            "heading_path": p.heading_path,
            "pages": pages,
            "chunk_id": p.chunk_id,
            "score": round(self.score, 5),
            "similarity": round(self.similarity, 4),
            "lexical_rank": self.lexical_rank,
            "dense_rank": self.dense_rank,
            "excerpt": excerpt(p.text),
        }


class EvidenceIndex:
    """One assessment's passages in memory, searchable both ways."""

    def __init__(self, passages: list[Passage], matrix: Vectors, embedder: Embedder) -> None:
        self.passages = passages
        self.embedder = embedder
        self._matrix = matrix
        self._bm25 = BM25([embedding_text(p.heading_path, p.text) for p in passages])
        self._exact: dict[str, NDArray[np.float64]] = {}  # one query text's exact scores

    @classmethod
    def load(
        cls,
        session: Session,
        assessment_id: uuid.UUID,
        embedder: Embedder | None = None,
        *,
        evidence_only: bool = True,
    ) -> EvidenceIndex:
        """Chunks with their vectors from `embedder`; chunks not embedded by it yet are
        embedded now (and stored), so the index is never partial."""
        embedder = embedder or default_embedder()
        index_missing(session, assessment_id, embedder)
        query = (
            passages_query(ChunkEmbedding.vector)
            .join(ChunkEmbedding, ChunkEmbedding.chunk_id == DocumentChunk.id)
            .where(
                DocumentChunk.assessment_id == assessment_id,
                ChunkEmbedding.model == embedder.name,
                # Superseded and expired versions are history, not evidence.
                Document.life_status == CURRENT,
            )
            .order_by(DocumentChunk.id)
        )
        if evidence_only:
            # The fleet's own documents (the SoA it wrote) state intent, they prove nothing.
            query = query.where(Document.uploaded_by != SYSTEM_UPLOADER)
        rows = session.execute(query).all()
        passages = [
            Passage(
                chunk_id=r.id,
                document_id=str(r.document_id),
                filename=r.filename,
                heading_path=r.heading_path,
                text=r.text,
                page_start=r.page_start,
                page_end=r.page_end,
            )
            for r in rows
        ]
        matrix = np.frombuffer(b"".join(r.vector for r in rows), dtype=STORED)
        return cls(passages, matrix.reshape(len(rows), embedder.dimensions), embedder)

    @property
    def size(self) -> int:
        return len(self.passages)

    @property
    def matrix(self) -> Vectors:
        return self._matrix

    def texts(self) -> list[str]:
        """What each passage is searched by: its heading path and text."""
        return [embedding_text(p.heading_path, p.text) for p in self.passages]

    def scores(self, facets: Sequence[Facet]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Every passage's BM25 and best cosine for the facets (the best over facets)."""
        lexical = np.zeros(self.size, dtype=np.float64)
        dense = np.full(self.size, -1.0, dtype=np.float64)
        for facet in facets:
            lexical = np.maximum(lexical, self._bm25.scores(facet.text, facet.weight))
            dense = np.maximum(dense, self._dense(facet))
        return lexical, dense

    def facet(
        self,
        texts: Sequence[str],
        vectors: Vectors | None = None,
        weight: Callable[[str], float] | None = None,
    ) -> Facet:
        """A facet from texts; `vectors` when the catalogue already holds them."""
        texts = [t for t in texts if t.strip()]
        if vectors is None:
            vectors = self.embedder.embed(texts)
        return Facet(text="\n".join(texts), vectors=vectors, weight=weight, texts=tuple(texts))

    def rank(
        self, facets: Sequence[Facet], method: Method = Method.FUSED, k: int = 10
    ) -> list[Ranked]:
        """The k best passages for the facets by `method`, best first."""
        if self.size == 0 or not facets:
            return []
        fused = np.zeros(self.size, dtype=np.float64)
        best_lexical = np.full(self.size, np.iinfo(np.int64).max, dtype=np.int64)
        best_dense = np.full(self.size, np.iinfo(np.int64).max, dtype=np.int64)
        similarity = np.full(self.size, -1.0, dtype=np.float64)
        for facet in facets:
            lexical = self._bm25.scores(facet.text, facet.weight)
            dense = self._dense(facet)
            similarity = np.maximum(similarity, dense)
            lexical_ranks = _ranks(lexical, matched=lexical > 0)
            dense_ranks = _ranks(dense, matched=np.ones(self.size, dtype=bool))
            best_lexical = np.minimum(best_lexical, lexical_ranks)
            best_dense = np.minimum(best_dense, dense_ranks)
            if method is not Method.DENSE:
                fused += _rrf(lexical_ranks)
            if method is not Method.LEXICAL:
                fused += _rrf(dense_ranks)
        # Ties (rare with two methods) fall back on similarity, then on chunk id order.
        order = np.lexsort((np.arange(self.size), -similarity, -fused))[:k]
        missing = np.iinfo(np.int64).max
        return [
            Ranked(
                passage=self.passages[i],
                score=float(fused[i]),
                similarity=float(similarity[i]),
                lexical_rank=None if best_lexical[i] == missing else int(best_lexical[i]),
                dense_rank=int(best_dense[i]),
            )
            for i in order
            if fused[i] > 0
        ]

    def _dense(self, facet: Facet) -> NDArray[np.float64]:
        """Best cosine of each passage to the facet's texts. An embedder that scores
        exactly (hashing) does so here too: its hashed vectors carry collision noise."""
        if isinstance(self.embedder, Rescorer) and facet.texts:
            return np.max([self._exact_scores(self.embedder, t) for t in facet.texts], axis=0)
        if not len(facet.vectors):
            return np.zeros(self.size)
        return np.asarray((self._matrix @ facet.vectors.T).max(axis=1), dtype=np.float64)

    def _exact_scores(self, rescorer: Rescorer, text: str) -> NDArray[np.float64]:
        # Requirements share controls, so the same text is asked many times: score it once.
        scores = self._exact.get(text)
        if scores is None:
            passages = [embedding_text(p.heading_path, p.text) for p in self.passages]
            scores = self._exact[text] = np.asarray(
                rescorer.rescore(text, passages), dtype=np.float64
            )
        return scores


def _ranks(scores: NDArray[Any], matched: NDArray[np.bool_]) -> NDArray[np.int64]:
    """1-based rank of each passage; unmatched or beyond CANDIDATES get no rank (max)."""
    order = np.argsort(-scores, kind="stable")
    ranks = np.full(len(scores), np.iinfo(np.int64).max, dtype=np.int64)
    top = order[:CANDIDATES]
    ranks[top] = np.arange(1, len(top) + 1)
    ranks[~matched] = np.iinfo(np.int64).max
    return ranks


def _rrf(ranks: NDArray[np.int64]) -> NDArray[np.float64]:
    ranked = ranks != np.iinfo(np.int64).max
    out = np.zeros(len(ranks), dtype=np.float64)
    out[ranked] = 1.0 / (RRF_K + ranks[ranked])
    return out


def documents_in_order(ranked: Sequence[Ranked]) -> list[str]:
    """Distinct document file names in the order their best passage appears."""
    seen: dict[str, None] = {}
    for hit in ranked:
        seen.setdefault(hit.passage.filename, None)
    return list(seen)
