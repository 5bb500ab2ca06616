"""Text embedders: the MiniLM sentence model by default (orchestrator.knowledge.minilm_onnx), or a
hashing of words into a fixed space that needs no model at all."""

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

from orchestrator.config.settings import get_settings, reset_settings
from orchestrator.db.compute_guard import computing

Vectors = NDArray[np.float32]

_WORD = re.compile(r"\w+")
# Words that occur in every policy: hashed, they only add noise to every vector.
_STOPWORD_TEXT = (
    "a an and are as at be been by for from has have in is it its of on or that the "
    "their this to was were which will with all any must shall should may can not no "
    "our we us you your they them these those such other also each"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
STOPWORDS = _STOPWORDS  # shared with the lexical retriever
_SUFFIXES = ("ations", "ation", "ions", "ion", "ings", "ing", "ies", "ed", "s")


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into L2-normalised float32 rows of a fixed width."""

    @property
    def name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


@runtime_checkable
class Rescorer(Protocol):
    """An embedder that can also score (query, text) pairs exactly, to re-rank the
    candidates its vectors retrieved."""

    def rescore(self, query: str, texts: Sequence[str]) -> list[float]: ...


def stem(word: str) -> str:
    """A deliberately crude stemmer, enough for "backups"/"backup", "restoration"/"restore",
    "encrypted"/"encryption" to meet."""
    if word.endswith("ss"):
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def features(text: str) -> Counter[str]:
    """Lowercased, stemmed word unigrams and bigrams (stop words dropped first)."""
    words = [stem(w) for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOPWORDS]
    grams = Counter(words)
    grams.update(f"{left} {right}" for left, right in zip(words, words[1:], strict=False))
    return grams


@lru_cache(maxsize=8192)
def term_weights(text: str) -> dict[str, float]:
    """Sublinear tf weights of the features, L2-normalised: the vector before hashing.
    Cached: re-scoring meets the same chunks query after query. Callers never mutate it."""
    weights = {term: 1.0 + math.log(count) for term, count in features(text).items()}
    norm = math.sqrt(sum(w * w for w in weights.values()))
    return {term: w / norm for term, w in weights.items()} if norm else {}


@lru_cache(maxsize=1 << 18)
def _bucket(feature: str, dimensions: int) -> tuple[int, float]:
    """Column and sign of a feature: the sign makes collisions cancel out on average."""
    digest = hashlib.blake2b(feature.encode(), digest_size=8, person=b"kb-hash-v1").digest()
    value = int.from_bytes(digest, "little")
    return value % dimensions, (1.0 if value >> 63 == 0 else -1.0)


class HashingEmbedder:
    """Signed feature hashing of `term_weights`, then L2 normalisation.

    Collisions in a few hundred dimensions add noise of about 1/sqrt(dimensions) to
    every similarity; `rescore` computes the same cosine on the unhashed terms.
    """

    def __init__(self, dimensions: int | None = None) -> None:
        self._dimensions = dimensions or get_settings().embedding_dim

    @property
    def name(self) -> str:
        return "hashing-blake2b-v1"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        computing("embedding")
        rows: list[int] = []
        cols: list[int] = []
        values: list[float] = []
        for row, text in enumerate(texts):
            for term, weight in term_weights(text).items():
                col, sign = _bucket(term, self._dimensions)
                rows.append(row)
                cols.append(col)
                values.append(sign * weight)
        matrix = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        np.add.at(
            matrix,
            (np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)),
            np.asarray(values, dtype=np.float32),
        )
        return normalise_rows(matrix)

    def rescore(self, query: str, texts: Sequence[str]) -> list[float]:
        wanted = term_weights(query)
        return [_dot(wanted, term_weights(t)) for t in texts]


def _dot(left: dict[str, float], right: dict[str, float]) -> float:
    """The cosine of two unit term vectors, walking the shorter: a query of a few words
    against a passage of hundreds of terms (pre-analysis asks a thousand of them)."""
    if len(right) < len(left):
        left, right = right, left
    return sum(weight * right.get(term, 0.0) for term, weight in left.items())


def normalise_rows(matrix: Vectors) -> Vectors:
    """Unit rows; an all-zero row (no words at all) stays zero rather than NaN."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


_default: Embedder | None = None


def default_embedder() -> Embedder:
    """The embedder jobs use: LIFECYCLE_EMBEDDER picks it (`minilm`, the default: the
    MiniLM sentence model in ONNX Runtime; `hashing`; or `sentence-transformers`, the same model
    through PyTorch); `set_default_embedder` swaps it (another model, tests)."""
    return _default or _configured(get_settings().embedding.embedder)


@lru_cache(maxsize=2)
def _configured(choice: str) -> Embedder:
    if choice == "hashing":
        return HashingEmbedder()
    if choice == "minilm":
        from orchestrator.knowledge.minilm_onnx import shared_minilm

        return shared_minilm()  # loaded once per process
    if choice == "sentence-transformers":
        from orchestrator.knowledge.sentence import SentenceEmbedder

        return SentenceEmbedder()  # loaded once per process: the model takes seconds
    raise ValueError(
        f"LIFECYCLE_EMBEDDER={choice!r}: choose 'minilm', 'hashing' or 'sentence-transformers'"
    )


def forget_configured() -> None:
    """Read the choice again (after the environment changed: tests)."""
    reset_settings()
    _configured.cache_clear()


def set_default_embedder(embedder: Embedder | None) -> None:
    global _default
    _default = embedder
