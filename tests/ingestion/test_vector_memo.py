"""The memo of recent vectors: a text the process embedded before comes back without the
model, each distinct text is computed once, and the oldest go first."""

from __future__ import annotations

import numpy as np

from orchestrator.knowledge.embedder import HashingEmbedder
from orchestrator.knowledge.minilm_onnx import OnnxMiniLMEmbedder, shared_minilm
from orchestrator.knowledge.vector_memo import VectorMemo, Vectors

MODEL = HashingEmbedder(dimensions=64)


class Counting:
    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def __call__(self, texts: list[str]) -> Vectors:
        self.asked.append(list(texts))
        return MODEL.embed(texts)


def test_each_distinct_text_is_computed_once_and_rows_keep_their_order() -> None:
    memo, model = VectorMemo(64), Counting()
    first = memo.embed(["backups", "access reviews", "backups"], model)
    assert model.asked == [["backups", "access reviews"]]
    second = memo.embed(["encryption", "access reviews", "backups"], model)
    assert model.asked[1:] == [["encryption"]]
    assert np.array_equal(first, MODEL.embed(["backups", "access reviews", "backups"]))
    assert np.array_equal(second, MODEL.embed(["encryption", "access reviews", "backups"]))
    assert memo.computed == 3


def test_the_least_recently_used_text_is_forgotten_first() -> None:
    memo, model = VectorMemo(64, max_texts=2), Counting()
    memo.embed(["a text", "b text"], model)
    memo.embed(["a text", "c text"], model)  # "a" used again: "b" is the oldest
    memo.embed(["a text", "b text"], model)
    assert model.asked == [["a text", "b text"], ["c text"], ["b text"]]


def test_nothing_asked_gives_an_empty_matrix_without_the_model() -> None:
    memo, model = VectorMemo(64), Counting()
    assert memo.embed([], model).shape == (0, 64)
    assert model.asked == []


def test_the_model_remembers_what_it_embedded_and_gives_the_same_vectors() -> None:
    texts = ["encrypted backups are kept offsite", "access is reviewed each quarter"]
    fresh = OnnxMiniLMEmbedder(remember=False).encode(texts)
    remembering = shared_minilm()
    once = remembering.embed(texts)
    model_runs = remembering.memo.computed if remembering.memo else 0
    again = remembering.embed(list(reversed(texts)))
    assert remembering.memo is not None and remembering.memo.computed == model_runs
    assert np.allclose(once, fresh, atol=1e-5) and np.array_equal(again, once[::-1])
