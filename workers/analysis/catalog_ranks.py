"""The reverse check: what each passage is about, among every control of the catalogue.

A passage that is specifically about a control ranks that control among its own closest
few of the whole catalogue (1,090 SCF controls), by meaning and by words. Boilerplate
("Purpose and Scope", lists of policies) is a little like every control and specifically
about none, so however high it ranks for a requirement, it fails here. Both rankings are
computed once per job for every passage: a matrix product each, in blocks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.knowledge.embedder import Vectors
from orchestrator.knowledge.lexical import K1, B, terms
from workers.analysis.requirement_query import control_texts

BLOCK = 512  # passages per matrix product: bounded memory whatever the corpus size
Ranks = NDArray[np.int16]


class CatalogRanks:
    """Per passage, the rank (1 = closest) of every catalogue control, both ways."""

    def __init__(
        self,
        catalog: LoadedCatalog,
        control_vectors: dict[str, Vectors],
        passage_texts: Sequence[str],
        passage_matrix: Vectors,
    ) -> None:
        self.ids = [c.id for c in catalog.controls if c.id in control_vectors]
        self.column = {control_id: j for j, control_id in enumerate(self.ids)}
        self.size = len(self.ids)
        self.similarity, self.dense = _dense([control_vectors[c] for c in self.ids], passage_matrix)
        controls = {c.id: c for c in catalog.controls}
        documents = [" ".join(control_texts(catalog, controls[c])) for c in self.ids]
        self.lexical = _lexical(documents, passage_texts)

    def columns(self, control_ids: Sequence[str]) -> list[int]:
        return [self.column[c] for c in control_ids if c in self.column]

    def closest(self, passage: int) -> str | None:
        """The control this passage is most about (both rankings summed)."""
        if not self.size:
            return None
        total = self.dense[passage].astype(np.int32) + self.lexical[passage]
        return self.ids[int(np.argmin(total))]


def _dense(vectors: list[Vectors], passages: Vectors) -> tuple[NDArray[np.float32], Ranks]:
    """Best cosine of each passage to each control's texts, and the controls' ranks."""
    count = len(passages)
    similarity = np.zeros((count, len(vectors)), dtype=np.float32)
    ranks = np.zeros((count, len(vectors)), dtype=np.int16)
    if not vectors or not count:
        return similarity, ranks
    rows = np.vstack(vectors).astype(np.float32)
    starts = np.cumsum([0] + [len(v) for v in vectors[:-1]])
    for begin in range(0, count, BLOCK):
        block = passages[begin : begin + BLOCK] @ rows.T
        best = np.maximum.reduceat(block, starts, axis=1)
        similarity[begin : begin + BLOCK] = best
        ranks[begin : begin + BLOCK] = _rank(best)
    return similarity, ranks


def _lexical(documents: Sequence[str], passages: Sequence[str]) -> Ranks:
    """BM25 of every control (as a document) for every passage (as the query)."""
    postings = [Counter(terms(d)) for d in documents]
    vocabulary = {t: i for i, t in enumerate(sorted({t for p in postings for t in p}))}
    size = len(documents)
    lengths = np.array([sum(p.values()) for p in postings], dtype=np.float64)
    norm = K1 * (1 - B + B * lengths / max(float(lengths.mean()) if size else 1.0, 1.0))
    weights = np.zeros((len(vocabulary), size), dtype=np.float32)
    for column, counts in enumerate(postings):
        for term, tf in counts.items():
            weights[vocabulary[term], column] = tf * (K1 + 1) / (tf + norm[column])
    frequency = (weights > 0).sum(axis=1)
    idf = np.log(1 + (size - frequency + 0.5) / (frequency + 0.5)).astype(np.float32)
    weights *= idf[:, None]
    ranks = np.full((len(passages), size), size, dtype=np.int16)
    for begin in range(0, len(passages), BLOCK):
        chunk = passages[begin : begin + BLOCK]
        query = np.zeros((len(chunk), len(vocabulary)), dtype=np.float32)
        for row, text in enumerate(chunk):
            found = [vocabulary[t] for t in set(terms(text)) if t in vocabulary]
            query[row, found] = 1.0
        scores = query @ weights
        chunk_ranks = _rank(scores)
        # A control that shares no word with the passage is not ranked at all.
        chunk_ranks[scores <= 0] = size
        ranks[begin : begin + BLOCK] = chunk_ranks
    return ranks


def _rank(scores: NDArray[np.float32]) -> Ranks:
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty(order.shape, dtype=np.int16)
    positions = np.broadcast_to(np.arange(1, order.shape[1] + 1, dtype=np.int16), order.shape)
    np.put_along_axis(ranks, order, positions, axis=1)
    return ranks
