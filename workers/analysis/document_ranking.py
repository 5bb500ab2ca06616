"""Which documents evidence a requirement, best first: the evidence list's order.

Each method (BM25 over words, cosine over meaning) gives a document its best passage's
score; each is scaled 0-1 over the documents and the two are summed, so neither scale
dominates and a document both methods find wins. A requirement usually links several SCF
control families, and the document written for it addresses most of them, where another
quotes one in passing: so a document also scores its reach, how close it comes to each of
the requirement's families by the reverse check (its best passage's rank of that family
among the whole catalogue's, both ways; `catalog_ranks`), averaged over the families and
weighed by REACH_WEIGHT. A long document has more passages to score by chance, and one
about everything scores for every requirement; so each document is also measured against
itself: how much higher it scores for this requirement than for the other requirements of
the frameworks in scope (a z-score over them, weighed by SELF_WEIGHT). Chosen on the SOC 2
procedures and checked on the ISO/IEC 27001 policies (`bench.evidence_retrieval`): both
methods' figures and the chosen one are printed there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

SELF_WEIGHT = 0.2
REACH_WEIGHT = 0.75
#: The combiner's inputs per document (`DocumentRanking.features`) and their weights: the
#: score is their weighted sum. `bench.evidence_combiner` fits these weights on one
#: labelled corpus and checks them on the other.
FEATURES = ("lexical", "dense", "reach", "self")
WEIGHTS = (1.0, 1.0, REACH_WEIGHT, SELF_WEIGHT)
Scores = NDArray[np.float64]


@dataclass(frozen=True)
class Signals:
    """What a requirement's passages score: per passage, BM25 and cosine; per passage and
    linked family, the reverse check's ranks of that family (1 = the passage's closest)."""

    lexical: Scores
    dense: Scores
    dense_ranks: NDArray[np.integer[Any]]
    lexical_ranks: NDArray[np.integer[Any]]

    def closeness(self) -> Scores:
        """Per passage and family: 2 for a family both methods rank first, falling with rank."""
        return closeness(self.dense_ranks) + closeness(self.lexical_ranks)


def closeness(ranks: NDArray[np.integer[Any]]) -> Scores:
    """1 for a first rank, falling as 1/log2(1 + rank): how the reverse check's ranks weigh."""
    return np.asarray(1 / np.log2(1 + ranks.astype(np.float64)))


class DocumentRanking:
    """Passages grouped by document; document scores for a requirement's passage scores."""

    def __init__(self, document_ids: list[str]) -> None:
        self.documents = list(dict.fromkeys(document_ids))
        position = {d: i for i, d in enumerate(self.documents)}
        self._of = np.array([position[d] for d in document_ids], dtype=np.intp)
        #: Each document's passages (their positions), in passage order.
        self.passages: dict[str, list[int]] = {d: [] for d in self.documents}
        for i, document_id in enumerate(document_ids):
            self.passages[document_id].append(i)
        # Passages grouped by document, for one reduction per document.
        self._grouped = np.argsort(self._of, kind="stable")
        counts = np.bincount(self._of, minlength=len(self.documents))
        self._starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp)
        self._mean: Scores | None = None
        self._spread: Scores | None = None

    def best(self, passage_scores: Scores) -> Scores:
        """Each document's best passage score."""
        out = np.full(len(self.documents), -np.inf)
        np.maximum.at(out, self._of, passage_scores)
        return out

    def reach(self, closeness: Scores) -> Scores:
        """Each document's best closeness to each family, averaged over the families."""
        if not len(self.documents) or closeness.shape[1] == 0:
            return np.zeros(len(self.documents))
        grouped = closeness[self._grouped]
        return np.asarray(np.maximum.reduceat(grouped, self._starts, axis=0).mean(axis=1))

    def plain(self, signals: Signals) -> Scores:
        return _summed(*self._scaled(signals))

    def features(self, signals: Signals) -> NDArray[np.float64]:
        """Per document (rows, in `documents` order) each of FEATURES: the score is their
        sum weighted by WEIGHTS."""
        scaled = self._scaled(signals)
        return np.column_stack([*scaled, self._standing(_summed(*scaled))])

    def _scaled(self, signals: Signals) -> tuple[Scores, Scores, Scores]:
        """Each document's best passage by words and by meaning, and its reach, each 0-1."""
        return (
            unit(self.best(signals.lexical)),
            unit(self.best(signals.dense)),
            unit(self.reach(signals.closeness())),
        )

    def _standing(self, plain: Scores) -> Scores:
        """How much higher the document scores here than over the reference requirements
        (z-score; 0 before `calibrate`)."""
        if self._mean is None or self._spread is None:
            return np.zeros_like(plain)
        return np.asarray((plain - self._mean) / self._spread)

    def calibrate(self, references: Iterable[Signals]) -> None:
        """Each document's mean and spread of `plain` over the reference requirements."""
        rows = [self.plain(signals) for signals in references]
        if len(rows) < 2:
            return
        matrix = np.vstack(rows)
        self._mean, self._spread = matrix.mean(axis=0), matrix.std(axis=0) + 1e-9

    def scores(self, signals: Signals) -> Scores:
        plain = self.plain(signals)
        return plain + SELF_WEIGHT * self._standing(plain)

    def order(self, signals: Signals) -> list[str]:
        scores = self.scores(signals)
        return [self.documents[i] for i in np.lexsort((np.arange(len(scores)), -scores))]


def _summed(lexical: Scores, dense: Scores, reach: Scores) -> Scores:
    return lexical + dense + REACH_WEIGHT * reach


def unit(values: Scores) -> Scores:
    """Scaled to 0-1 (min-max); a document with no passage (-inf) counts as 0."""
    finite = np.where(np.isfinite(values), values, 0.0)
    low, high = float(finite.min()), float(finite.max())
    return (finite - low) / (high - low) if high > low else np.zeros_like(finite)
