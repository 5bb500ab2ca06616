"""The reverse check: what each passage is about, among every control family of the
catalogue.

A passage that is specifically about a control ranks that control's family (the control
and its enhancements: VPM-06 with VPM-06.1 ...) among its own closest few of the whole
catalogue (about 250 SCF families), by meaning and by words. Families, not controls: a
passage on vulnerability scanning is as close to each enhancement of it as to the
control, and siblings must not crowd each other out. Boilerplate ("Purpose and Scope",
lists of policies) is a little like every family and specifically about none, so however
high it ranks for a requirement, it fails here. Both rankings are computed once per job
for every passage: a matrix product each, in blocks.
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


def family(control_id: str) -> str:
    """A control's family: the control an enhancement belongs to (VPM-06.3 -> VPM-06)."""
    return control_id.split(".", 1)[0]


class CatalogRanks:
    """Per passage, the rank (1 = closest) of every catalogue family, both ways, and the
    best cosine to each family's texts."""

    def __init__(
        self,
        catalog: LoadedCatalog,
        control_vectors: dict[str, Vectors],
        passage_texts: Sequence[str],
        passage_matrix: Vectors,
    ) -> None:
        known = [c for c in catalog.controls if c.id in control_vectors]
        # Enhancements sit beside their control, so each family is one run of columns.
        self.families = list(dict.fromkeys(family(c.id) for c in known))
        self.column = {f: j for j, f in enumerate(self.families)}
        self.size = len(self.families)
        grouped = sorted(known, key=lambda c: self.column[family(c.id)])  # stable
        first: dict[str, int] = {}
        for position, control in enumerate(grouped):
            first.setdefault(family(control.id), position)
        starts = np.array([first[f] for f in self.families], dtype=np.intp)
        self.similarity, self.dense = _dense(
            [control_vectors[c.id] for c in grouped], passage_matrix, starts
        )
        documents = [" ".join(control_texts(catalog, c)) for c in grouped]
        self.lexical = _lexical(documents, passage_texts, starts)

    def columns(self, control_ids: Sequence[str]) -> list[int]:
        """The families of `control_ids`, each once, as columns."""
        wanted = dict.fromkeys(family(c) for c in control_ids)
        return [self.column[f] for f in wanted if f in self.column]

    def closest(self) -> list[str | None]:
        """The family each passage is most about (both rankings summed)."""
        if not self.size:
            return [None] * len(self.dense)
        total = self.dense.astype(np.int32) + self.lexical
        return [self.families[int(j)] for j in np.argmin(total, axis=1)]


def _dense(
    vectors: list[Vectors], passages: Vectors, families: NDArray[np.intp]
) -> tuple[NDArray[np.float32], Ranks]:
    """Best cosine of each passage to each family's texts, and the families' ranks."""
    count = len(passages)
    similarity = np.zeros((count, len(families)), dtype=np.float32)
    ranks = np.zeros((count, len(families)), dtype=np.int16)
    if not vectors or not count:
        return similarity, ranks
    rows = np.vstack(vectors).astype(np.float32)
    starts = np.cumsum([0] + [len(v) for v in vectors[:-1]])
    texts = starts[families]  # each family's first text
    for begin in range(0, count, BLOCK):
        block = passages[begin : begin + BLOCK] @ rows.T
        best = np.maximum.reduceat(block, texts, axis=1)
        similarity[begin : begin + BLOCK] = best
        ranks[begin : begin + BLOCK] = _rank(best)
    return similarity, ranks


def _lexical(
    documents: Sequence[str], passages: Sequence[str], families: NDArray[np.intp]
) -> Ranks:
    """BM25 of every control (as a document) for every passage (as the query); a family
    scores as its best control."""
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
    ranks = np.full((len(passages), len(families)), len(families), dtype=np.int16)
    for begin in range(0, len(passages), BLOCK):
        chunk = passages[begin : begin + BLOCK]
        query = np.zeros((len(chunk), len(vocabulary)), dtype=np.float32)
        for row, text in enumerate(chunk):
            found = [vocabulary[t] for t in set(terms(text)) if t in vocabulary]
            query[row, found] = 1.0
        scores = np.maximum.reduceat(query @ weights, families, axis=1)
        chunk_ranks = _rank(scores)
        # A family that shares no word with the passage is not ranked at all.
        chunk_ranks[scores <= 0] = len(families)
        ranks[begin : begin + BLOCK] = chunk_ranks
    return ranks


def _rank(scores: NDArray[np.float32]) -> Ranks:
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty(order.shape, dtype=np.int16)
    positions = np.broadcast_to(np.arange(1, order.shape[1] + 1, dtype=np.int16), order.shape)
    np.put_along_axis(ranks, order, positions, axis=1)
    return ranks
