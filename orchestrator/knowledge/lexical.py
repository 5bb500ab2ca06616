"""BM25 over passages: the lexical half of hybrid evidence retrieval.

A passage is its heading path and its text: headings name the topic ("Backup > Frequency")
and weigh as much as the words under them. Terms are the KB's stemmed words without stop
words, so "backups"/"backup" meet as they do in the hashing embedder.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from orchestrator.knowledge.embedder import STOPWORDS, stem

_WORD = re.compile(r"[a-z0-9]+")
K1 = 1.2
B = 0.75


def terms(text: str) -> list[str]:
    return [
        stem(word)
        for word in _WORD.findall(text.lower())
        if len(word) > 1 and word not in STOPWORDS
    ]


class BM25:
    """Okapi BM25 over a fixed list of passages; scores every passage for a query."""

    def __init__(self, passages: Sequence[str]) -> None:
        self._postings: dict[str, list[tuple[int, int]]] = {}
        lengths = np.zeros(len(passages), dtype=np.float64)
        for row, passage in enumerate(passages):
            counts = Counter(terms(passage))
            lengths[row] = sum(counts.values())
            for term, count in counts.items():
                self._postings.setdefault(term, []).append((row, count))
        self._size = len(passages)
        average = float(lengths.mean()) if len(passages) else 0.0
        self._norm = K1 * (1 - B + B * lengths / average) if average else lengths + K1

    @property
    def size(self) -> int:
        return self._size

    def idf(self, term: str) -> float:
        frequency = len(self._postings.get(term, ()))
        return math.log(1 + (self._size - frequency + 0.5) / (frequency + 0.5))

    def scores(
        self, query: str, weight: Callable[[str], float] | None = None
    ) -> NDArray[np.float64]:
        """BM25 of every passage. Each distinct query term counts once: a long query
        (a control's description, question and methods) repeats its subject words, and
        repetition there says nothing about what a passage must contain. `weight` scales
        a query term (how specific it is to what is asked)."""
        result = np.zeros(self._size, dtype=np.float64)
        for term in set(terms(query)):
            postings = self._postings.get(term)
            if not postings:
                continue
            rows = np.fromiter((row for row, _ in postings), dtype=np.intp, count=len(postings))
            tf = np.fromiter(
                (count for _, count in postings), dtype=np.float64, count=len(postings)
            )
            scale = self.idf(term) * (weight(term) if weight is not None else 1.0)
            result[rows] += scale * tf * (K1 + 1) / (tf + self._norm[rows])
        return result
