"""The shipped catalogue's vectors come with the package for the shipped model: a first
assessment embeds none of the catalogue's texts, the kept vectors are the model's own, and a
file computed for another catalogue, model or texts' version is never read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from orchestrator.catalog.registry import shipped_catalog
from orchestrator.knowledge.embedder import HashingEmbedder
from orchestrator.knowledge.minilm_onnx import shared_minilm
from workers.analysis import requirement_query, shipped_vectors
from workers.analysis.requirement_query import QUERY_TEXTS, CatalogVectors, control_texts
from workers.analysis.shipped_vectors import file_name, identity, write

REBUILD = "python -m workers.analysis.build_shipped_vectors"


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing kept in this process's memory, and the package's file read again."""
    monkeypatch.setattr(requirement_query, "_memory", {})
    shipped_vectors.shipped_vectors.cache_clear()


def test_the_package_holds_every_control_of_the_shipped_catalogue_for_the_model() -> None:
    catalog = shipped_catalog()
    name = shared_minilm().name
    kept = shipped_vectors.shipped_vectors(catalog.info.sha256, name, QUERY_TEXTS)
    assert kept, f"no vectors for {catalog.info.source_name} and {name}: run {REBUILD}"
    for control in catalog.controls:
        rows = kept[control.id]
        assert rows.shape == (len(control_texts(catalog, control)), 384), (control.id, REBUILD)


def test_a_first_assessment_embeds_none_of_the_catalogue(tmp_path: Path) -> None:
    catalog = shipped_catalog()
    cache = CatalogVectors(catalog, shared_minilm(), tmp_path)
    ids = [control.id for control in catalog.controls]
    assert cache.missing(ids) == []
    assert len(cache.vectors(ids)) == len(ids)
    assert cache.computed == 0


def test_the_kept_vectors_are_the_models_own() -> None:
    """A sample of controls embedded now: the same vectors (float16 keeps cosines to 1e-3),
    so a changed encoder under the same name is caught here."""
    catalog = shipped_catalog()
    model = shared_minilm()
    kept = shipped_vectors.shipped_vectors(catalog.info.sha256, model.name, QUERY_TEXTS)
    for control in catalog.controls[::109]:
        now = model.embed(control_texts(catalog, control))
        cosine = np.sum(now * kept[control.id], axis=1) / np.linalg.norm(kept[control.id], axis=1)
        assert cosine.min() > 0.999, (control.id, cosine.min(), REBUILD)


@pytest.mark.parametrize("changed", ["catalog_sha256", "weights_sha256", "texts"])
def test_a_file_for_another_identity_is_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: str
) -> None:
    catalog = shipped_catalog()
    embedder = HashingEmbedder()
    controls = catalog.controls[:3]
    ids = [control.id for control in controls]
    wrong = {control_id: np.zeros((5, embedder.dimensions), np.float32) for control_id in ids}
    ident = identity(catalog.info.sha256, embedder.name, QUERY_TEXTS)
    write(tmp_path / file_name(catalog.info.sha256, embedder.name, QUERY_TEXTS), wrong, ident)
    monkeypatch.setattr(shipped_vectors, "shipped_dir", lambda: tmp_path)
    # The file as written is read: the identity is what refuses it below.
    assert set(shipped_vectors.shipped_vectors(catalog.info.sha256, embedder.name, QUERY_TEXTS))
    shipped_vectors.shipped_vectors.cache_clear()

    write(
        tmp_path / file_name(catalog.info.sha256, embedder.name, QUERY_TEXTS),
        wrong,
        {**ident, changed: "something else"},
    )
    cache = CatalogVectors(catalog, embedder, None)
    assert cache.missing(ids) == ids
    computed = cache.vectors(ids)
    assert cache.computed == sum(len(control_texts(catalog, c)) for c in controls)
    assert all(np.abs(rows).sum() > 0 for rows in computed.values())


def test_a_damaged_file_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = shipped_catalog()
    embedder = HashingEmbedder()
    path = tmp_path / file_name(catalog.info.sha256, embedder.name, QUERY_TEXTS)
    monkeypatch.setattr(shipped_vectors, "shipped_dir", lambda: tmp_path)
    for damaged in (b"not a zip", b"PK\x03\x04" + b"\0" * 64):
        path.write_bytes(damaged)
        shipped_vectors.shipped_vectors.cache_clear()
        assert (
            shipped_vectors.shipped_vectors(catalog.info.sha256, embedder.name, QUERY_TEXTS) == {}
        )
