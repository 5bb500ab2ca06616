"""Which documents evidence a requirement, best first: the evidence list's order.

Each method (BM25 over words, cosine over meaning) gives a document its best passage's
score; each is scaled 0-1 over the documents and the two are summed, so neither scale
dominates and a document both methods find wins. A long document has more passages to
score by chance, and one about everything scores for every requirement; so each document
is also measured against itself: how much higher it scores for this requirement than for
the other requirements of the frameworks in scope (a z-score over them, weighed by
SELF_WEIGHT). Chosen on the SOC 2 procedures and checked on the ISO/IEC 27001 policies
(`bench.evidence_retrieval`): both methods' figures and the chosen one are printed there.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

SELF_WEIGHT = 0.2
Scores = NDArray[np.float64]


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
        self._mean: Scores | None = None
        self._spread: Scores | None = None

    def best(self, passage_scores: Scores) -> Scores:
        """Each document's best passage score."""
        out = np.full(len(self.documents), -np.inf)
        np.maximum.at(out, self._of, passage_scores)
        return out

    def plain(self, lexical: Scores, dense: Scores) -> Scores:
        return unit(self.best(lexical)) + unit(self.best(dense))

    def calibrate(self, references: Iterable[tuple[Scores, Scores]]) -> None:
        """Each document's mean and spread of `plain` over the reference requirements."""
        rows = [self.plain(lexical, dense) for lexical, dense in references]
        if len(rows) < 2:
            return
        matrix = np.vstack(rows)
        self._mean, self._spread = matrix.mean(axis=0), matrix.std(axis=0) + 1e-9

    def scores(self, lexical: Scores, dense: Scores) -> Scores:
        plain = self.plain(lexical, dense)
        if self._mean is None or self._spread is None:
            return plain
        return plain + SELF_WEIGHT * (plain - self._mean) / self._spread

    def order(self, lexical: Scores, dense: Scores) -> list[str]:
        scores = self.scores(lexical, dense)
        return [self.documents[i] for i in np.lexsort((np.arange(len(scores)), -scores))]


def unit(values: Scores) -> Scores:
    """Scaled to 0-1 (min-max); a document with no passage (-inf) counts as 0."""
    finite = np.where(np.isfinite(values), values, 0.0)
    low, high = float(finite.min()), float(finite.max())
    return (finite - low) / (high - low) if high > low else np.zeros_like(finite)
