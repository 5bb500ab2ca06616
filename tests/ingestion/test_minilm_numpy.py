"""The default dense model: all-MiniLM-L6-v2 from the installed package, run in numpy."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from orchestrator.knowledge.minilm import DIMENSIONS, MiniLMEmbedder, shared_minilm


def test_vectors_are_unit_rows_of_the_model_width() -> None:
    vectors = shared_minilm().embed(["access reviews each quarter", "", "x" * 5000])
    assert vectors.shape == (3, DIMENSIONS) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_it_reproduces_the_published_model_similarity() -> None:
    # The model card's example pair: sentence-transformers reports 0.7553 for it.
    a, b = shared_minilm().embed(["A man is eating food.", "A man is eating a piece of bread."])
    assert abs(float(a @ b) - 0.7553) < 0.005


def test_meaning_beats_shared_words() -> None:
    query, paraphrase, unrelated = shared_minilm().embed(
        [
            "second factor when logging in remotely",
            "Multi-factor authentication is required for remote access.",
            "The cafeteria serves lunch from noon when staff log in to the rota.",
        ]
    )
    assert query @ paraphrase > query @ unrelated + 0.2


def test_batching_and_order_do_not_change_a_vector() -> None:
    texts = ["short", "a much longer sentence about encrypted backups kept offsite", "mid text"]
    together = MiniLMEmbedder(batch_size=2).embed(texts)
    alone = np.vstack([shared_minilm().embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_it_loads_with_the_hub_offline_and_without_pytorch() -> None:
    code = (
        "import sys; from orchestrator.knowledge.minilm import MiniLMEmbedder; "
        "v = MiniLMEmbedder().embed(['backups']); "
        "assert 'torch' not in sys.modules; print(v.shape)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={
            "HF_HUB_OFFLINE": "1",
            "PATH": "/usr/bin:/bin",
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "",
        },
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"(1, {DIMENSIONS})"
