"""Text embedders. The default hashes words into a fixed space: no model to download."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from orchestrator.settings import get_settings

Vectors = NDArray[np.float32]

_WORD = re.compile(r"\w+")
# Words that occur in every policy: hashed, they only add noise to every vector.
_STOPWORDS = frozenset(
    "a an and are as at be been by for from has have in is it its of on or that the "
    "their this to was were which will with all any must shall should may can not no "
    "our we us you your they them these those such other also each".split())


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into L2-normalised float32 rows of a fixed width."""

    @property
    def name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ed", "s")


def stem(word: str) -> str:
    """A deliberately crude stemmer: "backups", "encrypted" and "tests" meet their stems."""
    if word.endswith("ss"):
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def features(text: str) -> Counter[str]:
    """Lowercased, stemmed word unigrams and bigrams (stop words dropped first)."""
    words = [stem(w) for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOPWORDS]
    grams = Counter(words)
    grams.update(f"{left} {right}" for left, right in zip(words, words[1:], strict=False))
    return grams


@lru_cache(maxsize=1 << 18)
def _bucket(feature: str, dimensions: int) -> tuple[int, float]:
    """Column and sign of a feature: the sign makes collisions cancel out on average."""
    digest = hashlib.blake2b(feature.encode(), digest_size=8, person=b"kb-hash-v1").digest()
    value = int.from_bytes(digest, "little")
    return value % dimensions, (1.0 if value >> 63 == 0 else -1.0)


class HashingEmbedder:
    """Signed feature hashing with sublinear term frequency, then L2 normalisation."""

    def __init__(self, dimensions: int | None = None) -> None:
        self._dimensions = dimensions or get_settings().embedding_dim

    @property
    def name(self) -> str:
        return "hashing-blake2b-v1"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows: list[int] = []
        cols: list[int] = []
        weights: list[float] = []
        for row, text in enumerate(texts):
            for feature, count in features(text).items():
                col, sign = _bucket(feature, self._dimensions)
                rows.append(row)
                cols.append(col)
                weights.append(sign * (1.0 + math.log(count)))
        matrix = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        np.add.at(matrix, (np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)),
                  np.asarray(weights, dtype=np.float32))
        return normalise_rows(matrix)


def normalise_rows(matrix: Vectors) -> Vectors:
    """Unit rows; an all-zero row (no words at all) stays zero rather than NaN."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


_default: Embedder | None = None


def default_embedder() -> Embedder:
    """The embedder jobs use; `set_default_embedder` swaps it (another model, tests)."""
    return _default or HashingEmbedder()


def set_default_embedder(embedder: Embedder | None) -> None:
    global _default
    _default = embedder
