"""Compute the shipped catalogue's control-text vectors with the shipped model and keep them
in the package (`workers.analysis.shipped_vectors`): run when the catalogue file, the model
or `control_texts` changes; a test says when.

    python -m workers.analysis.build_shipped_vectors
"""

from __future__ import annotations

import sys
from pathlib import Path

from orchestrator.catalog.registry import shipped_catalog
from orchestrator.knowledge.minilm_onnx import OnnxMiniLMEmbedder
from workers.analysis.requirement_query import QUERY_TEXTS, CatalogVectors
from workers.analysis.shipped_vectors import file_name, identity, shipped_dir, write


def build(folder: Path | None = None) -> Path:
    model = OnnxMiniLMEmbedder()
    catalog = shipped_catalog()
    vectors = CatalogVectors(catalog, model, None, shipped=False).vectors(
        control.id for control in catalog.controls
    )
    target = (folder or shipped_dir()) / file_name(catalog.info.sha256, model.name, QUERY_TEXTS)
    write(target, vectors, identity(catalog.info.sha256, model.name, QUERY_TEXTS))
    return target


def main() -> int:
    target = build()
    print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
