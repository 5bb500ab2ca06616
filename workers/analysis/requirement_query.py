"""What the knowledge base is asked for a requirement: its linked SCF controls' own words.

Per control, the texts are its name with its description, its control question, its
methods to comply and the names of the Evidence Request List artifacts it asks for.
Their vectors depend only on the catalogue version and the model, so they are computed
once and kept (in memory per process, and in a file under the storage directory keyed by
catalogue checksum and model), and a second assessment on the same catalogue reuses them;
the shipped catalogue's come with the package for the shipped model
(`workers.analysis.shipped_vectors`).
The first computes them in batches over the analysis workers, each kept as a part file
the next read merges into the one file (`workers.analysis.catalog_batches`).
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import cast

import numpy as np

from orchestrator.catalog.model import CatalogControl, LoadedCatalog
from orchestrator.knowledge.embedder import Embedder, Vectors
from orchestrator.knowledge.hybrid import EvidenceIndex, Facet
from orchestrator.knowledge.lexical import terms
from workers.analysis.shipped_vectors import file_name, shipped_vectors

#: Where the vectors are kept, under the storage directory: same catalogue, same model.
CACHE_DIR = "catalog-vectors"
#: Between a control's id and a text's place in it, in a batch item ("GOV-01#2").
TEXT_MARK = "#"
QUERY_TEXTS = "q2"  # which texts control_texts gives: a change must not reuse old vectors
_lock = threading.Lock()
_memory: dict[tuple[str, str, str], dict[str, Vectors]] = {}


def control_texts(catalog: LoadedCatalog, control: CatalogControl) -> list[str]:
    details = control.details
    # The name alone too: a short query meets a passage headed with the same subject.
    texts = [
        control.title,
        f"{control.title}. {control.description}".strip(),
        str(details.get("question") or ""),
        str(details.get("methods_to_comply") or ""),
    ]
    artifacts = _artifact_names(catalog).get(control.id)
    if artifacts:
        texts.append("; ".join(artifacts))
    return [text for text in texts if text.strip(" .")]


def _artifact_names(catalog: LoadedCatalog) -> dict[str, list[str]]:
    cached = catalog.__dict__.get("_erl_artifacts")
    if cached is None:
        cached = {}
        for request in catalog.details.get("evidence_requests", ()):
            for control_id in request.get("control_ids", ()):
                cached.setdefault(control_id, []).append(str(request.get("artifact", "")))
        object.__setattr__(catalog, "_erl_artifacts", cached)
    return cached


class CatalogVectors:
    """Vectors of the catalogue's control texts for one model, computed once."""

    def __init__(
        self,
        catalog: LoadedCatalog,
        embedder: Embedder,
        cache_dir: Path | None,
        *,
        shipped: bool = True,
    ) -> None:
        self.catalog = catalog
        self.embedder = embedder
        self._shipped = shipped  # False: compute what the kept file lacks (to build the package's)
        self._key = (catalog.info.sha256, embedder.name, QUERY_TEXTS)
        self._file = (
            cache_dir / file_name(catalog.info.sha256, embedder.name, QUERY_TEXTS)
            if cache_dir is not None
            else None
        )
        self.computed = 0  # texts embedded by this instance: 0 when the cache served all

    def vectors(self, control_ids: Iterable[str]) -> dict[str, Vectors]:
        wanted = self._in_catalog(control_ids)
        with _lock:
            known = self._known(wanted)
            parts: list[Path] = []
            if any(c not in known for c in wanted):
                parts = self._parts()
                loaded: dict[str, Vectors] = {}
                for part in parts:
                    loaded.update(_load(part))
                known.update(self._assembled(loaded))
            missing = [c for c in wanted if c not in known]
            if missing:
                known.update(self._embed(missing))
            if missing or parts:
                self._write_file(known)
                for part in parts:  # merged into the file: a late reader finds them there
                    part.unlink(missing_ok=True)
            return {c: known[c] for c in wanted}

    def missing(self, control_ids: Iterable[str]) -> list[str]:
        """The controls whose vectors neither this process nor the kept file has."""
        wanted = self._in_catalog(control_ids)
        with _lock:
            known = self._known(wanted)
            return [c for c in wanted if c not in known]

    def text_items(self, control_ids: Iterable[str]) -> list[str]:
        """These controls' texts as batch items ("GOV-01#2": GOV-01's third text), longest
        first. The model pads a batch to its longest text: batches cut from texts of
        about one length pad little, where a batch of whole controls mixes a name of a
        few words with a paragraph (a third of the catalogue's tokens were padding)."""
        items = [
            (-len(text), control_id, index)
            for control_id in self._in_catalog(control_ids)
            for index, text in enumerate(self._texts(control_id))
        ]
        return [f"{control_id}{TEXT_MARK}{index}" for _, control_id, index in sorted(items)]

    def keep_part(self, items: Sequence[str]) -> None:
        """Embed these controls' texts, or these texts (`text_items`), and keep them in a
        part file beside the kept one (a batch of the catalogue:
        `workers.analysis.catalog_batches`), which the next `vectors` call merges in once
        every text of a control is there. Without a directory they stay in this process."""
        embedded = self._embed(items)
        if self._file is None:
            with _lock:
                held = _memory.setdefault(self._key, {})
                held.update(embedded)  # a control's texts may come in several batches
                held.update(self._assembled(held))
            return
        digest = hashlib.sha256("\n".join(sorted(embedded)).encode()).hexdigest()[:16]
        _write_npz(self._file.with_name(f"{self._file.stem}.part-{digest}.npz"), embedded)

    def _known(self, wanted: list[str]) -> dict[str, Vectors]:
        """This process's vectors, with the kept file's read in when some are wanted that
        it lacks (under `_lock`)."""
        known = _memory.setdefault(self._key, {})
        if any(c not in known for c in wanted):
            known.update(self._read_file())
        if self._shipped and any(c not in known for c in wanted):
            shipped = shipped_vectors(self.catalog.info.sha256, self.embedder.name, QUERY_TEXTS)
            known.update({c: rows for c, rows in shipped.items() if c not in known})
        return known

    def _in_catalog(self, control_ids: Iterable[str]) -> list[str]:
        return [c for c in dict.fromkeys(control_ids) if self.catalog.control(c) is not None]

    def _parts(self) -> list[Path]:
        if self._file is None or not self._file.parent.exists():
            return []
        return sorted(self._file.parent.glob(f"{self._file.stem}.part-*.npz"))

    def _texts(self, control_id: str) -> list[str]:
        control = self.catalog.control(control_id)
        return [] if control is None else control_texts(self.catalog, control)

    def _embed(self, items: Sequence[str]) -> dict[str, Vectors]:
        """Vectors of whole controls (an id: its texts' matrix) or single texts (an item:
        one row), for those in the catalogue."""
        texts: list[str] = []
        spans: list[tuple[str, int, int]] = []
        for item in dict.fromkeys(items):
            control_id, _, index = item.partition(TEXT_MARK)
            own = self._texts(control_id)
            if index:
                own = own[int(index) : int(index) + 1] if index.isdigit() else []
            if own:
                spans.append((item, len(texts), len(texts) + len(own)))
                texts.extend(own)
        matrix = self.embedder.embed(texts)
        self.computed += len(texts)
        return {item: matrix[start:end] for item, start, end in spans}

    def _assembled(self, loaded: dict[str, Vectors]) -> dict[str, Vectors]:
        """Whole controls' vectors from what parts hold: a control kept whole as it is, and
        one kept text by text once all its texts are there (in their order)."""
        whole = {key: rows for key, rows in loaded.items() if TEXT_MARK not in key}
        by_control: dict[str, dict[int, Vectors]] = {}
        for key, rows in loaded.items():
            control_id, mark, index = key.partition(TEXT_MARK)
            if mark and index.isdigit():
                by_control.setdefault(control_id, {})[int(index)] = rows
        for control_id, texts in by_control.items():
            count = len(self._texts(control_id))
            if count and all(i in texts for i in range(count)):
                whole[control_id] = np.vstack([texts[i] for i in range(count)])
        return whole

    def _read_file(self) -> dict[str, Vectors]:
        if self._file is None:
            return {}
        return _load(self._file)

    def _write_file(self, known: dict[str, Vectors]) -> None:
        if self._file is not None:  # whole controls only: single texts are a batch's
            _write_npz(self._file, {k: v for k, v in known.items() if TEXT_MARK not in k})


def _load(path: Path) -> dict[str, Vectors]:
    if not path.exists():
        return {}
    try:
        with np.load(path) as stored:
            return {name: stored[name].astype(np.float32) for name in stored.files}
    except (OSError, ValueError):
        return {}  # a damaged (or just removed) file is recomputed, never trusted


def _write_npz(path: Path, vectors: dict[str, Vectors]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(buffer, **vectors)  # type: ignore[arg-type]
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(buffer.getvalue())
    os.replace(tmp, path)  # whole file or none: concurrent readers never see half


def requirement_facets(
    index: EvidenceIndex,
    catalog: LoadedCatalog,
    vectors: dict[str, Vectors],
    control_ids: Sequence[str],
) -> list[Facet]:
    """The requirement as one facet: its linked controls' texts and cached vectors, query
    terms weighted by how specific they are within the catalogue."""
    texts: list[str] = []
    rows: list[Vectors] = []
    for control_id in control_ids:
        control = catalog.control(control_id)
        if control is None or control_id not in vectors:
            continue
        texts.extend(control_texts(catalog, control))
        rows.append(vectors[control_id])
    if not texts:
        return []
    return [index.facet(texts, np.vstack(rows), catalog_specificity(catalog))]


def catalog_specificity(catalog: LoadedCatalog) -> Callable[[str], float]:
    """A query term's inverse document frequency over the catalogue's control texts.

    Control text is written in a house style ("Mechanisms exist to ...", "Does the
    organization ..."): words that every control uses say nothing about which control is
    asked, however rare they are in the documents searched."""
    cached = catalog.__dict__.get("_specificity")
    if cached is None:
        frequency: Counter[str] = Counter()
        for control in catalog.controls:
            frequency.update(set(terms(" ".join(control_texts(catalog, control)))))
        size = len(catalog.controls)
        idf = {t: math.log(1 + (size - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}
        unseen = math.log(1 + (size + 0.5) / 0.5)

        def cached(term: str) -> float:
            return idf.get(term, unseen)

        object.__setattr__(catalog, "_specificity", cached)
    return cast(Callable[[str], float], cached)


def forget_cached_vectors() -> None:
    """Drop the in-process copies (tests of the file cache)."""
    with _lock:
        _memory.clear()
