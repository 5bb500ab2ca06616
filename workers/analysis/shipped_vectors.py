"""The shipped catalogue's control-text vectors for the shipped model, kept in the package.

A first assessment needs every SCF control's vectors (a passage's rank among the catalogue's
controls is part of its evidence): embedding the 3,930 texts took most of a first run's
time. They depend only on the catalogue file, the model's published weights and the texts
`control_texts` gives, so they are computed once, when one of those changes, by

    python -m workers.analysis.build_shipped_vectors

and read from the package wherever the kept file has none. A file whose identity
(catalogue checksum, model name, weights' and tokenizer's SHA-256, texts' version) is not
the running one's, or that cannot be read, is ignored, and the vectors are computed as
before. Kept as float16: each text's vector keeps a cosine above 0.9999 to the float32 one.
"""

from __future__ import annotations

import io
import json
import zipfile
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.knowledge.embedder import Vectors
from orchestrator.knowledge.minilm import PUBLISHED_SHA256

#: The identity a file's vectors were computed for, kept inside it.
IDENTITY = "__identity__"


def identity(catalog_sha256: str, embedder_name: str, texts: str) -> dict[str, str]:
    return {
        "catalog_sha256": catalog_sha256,
        "embedder": embedder_name,
        "weights_sha256": PUBLISHED_SHA256["model.safetensors"],
        "tokenizer_sha256": PUBLISHED_SHA256["tokenizer.json"],
        "texts": texts,
    }


def file_name(catalog_sha256: str, embedder_name: str, texts: str) -> str:
    """The file's name, the package's as the storage directory's kept one."""
    return f"{catalog_sha256[:32]}-{embedder_name}-{texts}.npz"


def shipped_dir() -> Path:
    return Path(str(files("orchestrator.catalog").joinpath("data", "vectors")))


@lru_cache(maxsize=4)
def shipped_vectors(catalog_sha256: str, embedder_name: str, texts: str) -> dict[str, Vectors]:
    """The package's vectors for this catalogue, model and texts' version, or none."""
    path = shipped_dir() / file_name(catalog_sha256, embedder_name, texts)
    if not path.is_file():
        return {}
    try:
        with np.load(path) as stored:
            kept = json.loads(bytes(stored[IDENTITY]).decode())
            if kept != identity(catalog_sha256, embedder_name, texts):
                return {}
            return {n: stored[n].astype(np.float32) for n in stored.files if n != IDENTITY}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return {}  # damaged: computed again, never trusted


def write(path: Path, vectors: dict[str, Vectors], ident: dict[str, str]) -> None:
    """Keep `vectors` as float16 with their identity, replacing any other file beside."""
    raw = json.dumps(ident, sort_keys=True).encode()
    arrays: dict[str, Any] = {name: rows.astype(np.float16) for name, rows in vectors.items()}
    arrays[IDENTITY] = np.frombuffer(raw, dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob("*.npz"):
        stale.unlink()  # one catalogue and one model ship: an older file is never read again
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    path.write_bytes(buffer.getvalue())
