"""all-MiniLM-L6-v2 run by ONNX Runtime: the product's dense embedder.

Same verified weights, tokenizer, embedding lookups and pooling as the numpy reference
(orchestrator.knowledge.minilm); only the encoder layers run in ONNX Runtime, from a graph
built in memory from those weights (orchestrator.knowledge.minilm_graph). Its vectors
agree with the reference to a cosine above 0.99999 and cost about 2.4x less CPU per text
(bench/embedding_runtime.py). int8 quantisation was measured and left out: cosine 0.993
to the reference, which moves evidence rankings.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import onnxruntime

from orchestrator.config.settings import get_settings
from orchestrator.knowledge.minilm import F32, MiniLMEmbedder
from orchestrator.knowledge.minilm_graph import HIDDEN_INPUT, MASK_INPUT, encoder_graph


class OnnxMiniLMEmbedder(MiniLMEmbedder):
    def __init__(self, batch_size: int = 32, remember: bool = True) -> None:
        super().__init__(batch_size, remember)
        options = onnxruntime.SessionOptions()
        # One thread by default: a fleet runs a job process per core, as for numpy's BLAS.
        # More never spin when idle, so other processes keep their cores.
        options.intra_op_num_threads = get_settings().embedding.model_threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            encoder_graph(self._weights).SerializeToString(),
            options,
            providers=["CPUExecutionProvider"],
        )

    @property
    def name(self) -> str:
        return "minilm-l6-v2-onnx"

    def _encode(self, x: F32, attention_bias: F32) -> F32:
        feeds = {
            HIDDEN_INPUT: np.ascontiguousarray(x, dtype=np.float32),
            MASK_INPUT: np.ascontiguousarray(attention_bias, dtype=np.float32),
        }
        (encoded,) = self._session.run(None, feeds)
        return np.asarray(encoded, dtype=np.float32)


@lru_cache(maxsize=1)
def shared_minilm() -> OnnxMiniLMEmbedder:
    """One model per process: loading the weights and building the graph take a moment."""
    return OnnxMiniLMEmbedder()
