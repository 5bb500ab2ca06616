"""The vectors of texts this process embedded lately, by the text's digest.

The same passages come back to one process: a redelivered or retried index job, a
document uploaded again with the same text, the next period's assessment of the same
policies, a reassessment. A model's vector depends only on the text, so the memo answers
those without the model; it holds the most recently used texts only (about 1.5 KB each at
384 dimensions), and a memo belongs to one model's embedder.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence

import numpy as np
from cachetools import LRUCache
from numpy.typing import NDArray

Vectors = NDArray[np.float32]

#: About 50 MB of vectors at 384 dimensions: a few large assessments' passages.
MAX_TEXTS = 32_768


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class VectorMemo:
    def __init__(self, dimensions: int, max_texts: int = MAX_TEXTS) -> None:
        self._dimensions = dimensions
        self._rows: LRUCache[bytes, Vectors] = LRUCache(maxsize=max_texts)
        self._lock = threading.Lock()  # job threads of one worker share the embedder
        self.computed = 0  # texts the model embedded through this memo

    def embed(self, texts: Sequence[str], compute: Callable[[list[str]], Vectors]) -> Vectors:
        """The texts' vectors: remembered ones as they are, the others by `compute` (each
        distinct text once), then remembered."""
        keys = [_digest(text) for text in texts]
        out = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        wanted: dict[bytes, list[int]] = {}
        with self._lock:
            for row, key in enumerate(keys):
                known = self._rows.get(key)
                if known is None:
                    wanted.setdefault(key, []).append(row)
                else:
                    out[row] = known
        if not wanted:
            return out
        firsts = [rows[0] for rows in wanted.values()]
        computed = compute([texts[row] for row in firsts])
        with self._lock:
            self.computed += len(firsts)
            for (key, rows), vector in zip(wanted.items(), computed, strict=True):
                vector = vector.copy()  # a row of its own: the batch's matrix is not kept
                vector.setflags(write=False)
                self._rows[key] = vector
                out[rows] = vector
        return out
