"""The default dense model: all-MiniLM-L6-v2 from the installed package, its files checked
by digest, run by ONNX Runtime and agreeing with the numpy reference encoder."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from orchestrator.config.settings import reset_settings
from orchestrator.knowledge import minilm
from orchestrator.knowledge.minilm import DIMENSIONS, MiniLMEmbedder, ModelUnavailable
from orchestrator.knowledge.minilm_onnx import OnnxMiniLMEmbedder, shared_minilm
from tests.support.shared_data import SHARED_DATA

#: Passages of real policies, of every length up to the model's 256 tokens and beyond.
POLICY_DIR = "evidence"


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
    together = OnnxMiniLMEmbedder(batch_size=2).embed(texts)
    alone = np.vstack([shared_minilm().embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_it_loads_with_the_hub_offline_and_without_pytorch() -> None:
    code = (
        "import sys; from orchestrator.knowledge.minilm_onnx import shared_minilm; "
        "v = shared_minilm().embed(['backups']); "
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


def test_onnx_runtime_gives_the_reference_encoders_vectors() -> None:
    root = SHARED_DATA / POLICY_DIR
    if not root.is_dir():
        pytest.skip(f"the labelled procedures are not at {root}")
    texts = [
        block.strip()
        for path in sorted(root.rglob("*.md"))[:12]
        for block in path.read_text(encoding="utf-8").split("\n\n")
        if len(block.strip()) > 30
    ][:96]
    assert len(texts) >= 60
    reference = MiniLMEmbedder().embed(texts)
    product = shared_minilm().embed(texts)
    cosines = np.sum(reference * product, axis=1)
    assert float(cosines.min()) > 0.9999, float(cosines.min())


def test_weights_that_are_not_the_published_files_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The package's zip again, with one bit of one weight flipped.
    copy = tmp_path / "model.zip"
    with zipfile.ZipFile(minilm.model_archive()) as source, zipfile.ZipFile(copy, "w") as target:
        for name in source.namelist():
            data = bytearray(source.read(name))
            if name == "model.safetensors":
                data[-1] ^= 0x01
            target.writestr(name, bytes(data))
    monkeypatch.setattr(minilm, "model_archive", lambda: copy)
    with pytest.raises(ModelUnavailable, match="is not the published .* expected 53aa5117"):
        MiniLMEmbedder()


def test_a_missing_package_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minilm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelUnavailable, match="requirements/model.txt"):
        minilm.model_archive()


def test_more_threads_give_the_same_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"passage {i}: access rights are reviewed each quarter by owners" for i in range(40)]
    models = []
    try:
        for threads in ("1", "2"):
            monkeypatch.setenv("LIFECYCLE_MODEL_THREADS", threads)
            reset_settings()
            models.append(OnnxMiniLMEmbedder(remember=False))
    finally:
        monkeypatch.undo()
        reset_settings()
    one, two = models
    assert one._session.get_session_options().intra_op_num_threads == 1
    assert two._session.get_session_options().intra_op_num_threads == 2
    assert np.array_equal(two.embed(texts), one.embed(texts))
