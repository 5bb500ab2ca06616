"""The catalogue's vectors embedded in parts (one per batch, by any analysis worker) and
merged into the one kept file: the same vectors as one process embedding them all."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from orchestrator.catalog.registry import shipped_catalog
from orchestrator.knowledge.embedder import default_embedder
from workers.analysis import requirement_query
from workers.analysis.requirement_query import CatalogVectors


def _forget(monkeypatch: pytest.MonkeyPatch) -> None:
    """What follows stands for another process: nothing kept in this one's memory."""
    monkeypatch.setattr(requirement_query, "_memory", {})


@pytest.fixture
def vectors_in(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path | None], CatalogVectors]:
    """A fresh process's view of the shipped catalogue's vectors kept in a directory."""
    catalog = shipped_catalog()
    _forget(monkeypatch)
    return lambda cache_dir: CatalogVectors(catalog, default_embedder(), cache_dir)


def test_parts_kept_by_two_workers_merge_into_the_kept_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vectors_in: Callable[..., CatalogVectors]
) -> None:
    ids = [control.id for control in shipped_catalog().controls][:120]
    alone = vectors_in(None).vectors(ids)
    _forget(monkeypatch)

    cache_dir = tmp_path / "catalog-vectors"
    assert vectors_in(cache_dir).missing(ids) == ids
    vectors_in(cache_dir).keep_part(ids[:50])  # one worker
    vectors_in(cache_dir).keep_part(ids[50:] + ["NOT-A-CONTROL"])  # another
    _forget(monkeypatch)
    assert len(list(cache_dir.glob("*.part-*.npz"))) == 2

    merging = vectors_in(cache_dir)
    merged = merging.vectors(ids)

    assert merging.computed == 0  # every text came from a part
    assert list(merged) == ids
    assert all(np.array_equal(merged[c], alone[c]) for c in ids)
    assert list(cache_dir.glob("*.part-*.npz")) == []  # merged into the one file
    _forget(monkeypatch)
    later = vectors_in(cache_dir)
    assert later.missing(ids) == []
    assert all(np.array_equal(later.vectors(ids)[c], alone[c]) for c in ids)
    assert later.computed == 0


def test_a_damaged_part_is_embedded_again_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vectors_in: Callable[..., CatalogVectors]
) -> None:
    catalog = shipped_catalog()
    ids = [control.id for control in catalog.controls][:20]
    cache_dir = tmp_path / "catalog-vectors"
    vectors_in(cache_dir).keep_part(ids[:10])
    (part,) = cache_dir.glob("*.part-*.npz")
    part.write_bytes(b"not a numpy archive")
    vectors_in(cache_dir).keep_part(ids[10:])  # another worker's
    _forget(monkeypatch)

    merging = vectors_in(cache_dir)
    merged = merging.vectors(ids)

    assert list(merged) == ids
    # The damaged part's ten controls were embedded again, and only they.
    texts = [requirement_query.control_texts(catalog, control) for control in catalog.controls]
    assert merging.computed == sum(len(own) for own in texts[:10])


def test_texts_kept_in_batches_of_one_length_merge_into_whole_controls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vectors_in: Callable[..., CatalogVectors]
) -> None:
    """The first draft's batches cut the controls' texts longest first, a control's texts
    in several batches: merged, each control's vectors are its texts' in their order."""
    catalog = shipped_catalog()
    ids = [control.id for control in catalog.controls][:60]
    alone = vectors_in(None).vectors(ids)
    _forget(monkeypatch)

    cache_dir = tmp_path / "catalog-vectors"
    items = vectors_in(cache_dir).text_items(ids)
    texts = {
        c.id: requirement_query.control_texts(catalog, c) for c in catalog.controls if c.id in ids
    }
    assert len(items) == sum(len(own) for own in texts.values())
    lengths = [len(texts[c][int(i)]) for c, _, i in (item.partition("#") for item in items)]
    assert lengths == sorted(lengths, reverse=True)
    for start in range(0, len(items), 40):  # a batch each, as workers would take them
        vectors_in(cache_dir).keep_part(items[start : start + 40])
    _forget(monkeypatch)
    # Parts are not the kept file: until a read merges them, each control is missing.
    assert vectors_in(cache_dir).missing(ids) == ids

    merging = vectors_in(cache_dir)
    merged = merging.vectors(ids)

    assert merging.computed == 0  # every text came from a part
    assert all(np.array_equal(merged[c], alone[c]) for c in ids)
    _forget(monkeypatch)
    assert vectors_in(cache_dir).missing(ids) == []


def test_a_control_missing_one_text_is_embedded_again_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vectors_in: Callable[..., CatalogVectors]
) -> None:
    catalog = shipped_catalog()
    ids = [control.id for control in catalog.controls][:5]
    cache_dir = tmp_path / "catalog-vectors"
    items = vectors_in(cache_dir).text_items(ids)
    lost = items[0]  # a batch that never came back
    vectors_in(cache_dir).keep_part(items[1:])
    _forget(monkeypatch)

    merging = vectors_in(cache_dir)
    merging.vectors(ids)

    control = catalog.control(lost.partition("#")[0])
    assert control is not None
    assert merging.computed == len(requirement_query.control_texts(catalog, control))
