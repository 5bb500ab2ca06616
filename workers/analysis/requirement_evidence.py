"""Asking the knowledge base about requirements: the evidence list and its proposal.

Per requirement, every passage is scored by BM25 and by dense cosine over the texts of
its linked SCF controls; the two are put on one scale (each min-max over the corpus) and
summed, with a boost for passages that are specifically about the requirement's controls
(the reverse check, `catalog_ranks`). The evidence list is the best passage of each of
the first ten documents, then further passages of those documents. The proposal is
judged from the passages of that list and the best of the rest (`proposal`).

The SoA and the evidence analysis ask the same way; a set of linked controls is asked
once per job, however many requirements (or control rows) share it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.config.settings import get_settings
from orchestrator.contracts.jobs import JobRequest
from orchestrator.jobs.interface import JobContext
from orchestrator.knowledge.embedder import default_embedder
from orchestrator.knowledge.hybrid import EvidenceIndex, Ranked
from orchestrator.knowledge.vectors import embed_ahead
from workers.analysis.catalog_batches import catalog_vectors_for, embed_catalog_in_batches
from workers.analysis.catalog_ranks import CatalogRanks
from workers.analysis.document_judgement import judge_documents
from workers.analysis.document_set_aside import set_aside_documents
from workers.analysis.proposal import (
    RELATED_RANK,
    SPECIFIC_RANK,
    Checked,
    Judged,
    on_topic_for,
    propose,
)
from workers.analysis.requirement_query import CACHE_DIR, CatalogVectors, requirement_facets
from workers.analysis.sections import non_normative
from workers.analysis.templates import placeholders

DOCUMENTS = 10  # the evidence list names this many distinct documents
FURTHER = 5  # and then this many more passages of those documents
POOL = 50  # passages judged beyond the list: a specific passage may rank lower
BOOST = 0.25  # weight of the reverse check in the ranking, per method


def prepare_retrieval(request: JobRequest) -> None:
    """The drafting job's `Prepare`: embed the chunks the current model has not seen and
    the catalogue's control texts the cache lacks (a minute for a whole catalogue on one
    core, in batches any analysis worker may take) before the job's transaction opens, so
    it never holds its locks through that. Every control is embedded, not only those in
    scope: the reverse check ranks them all."""
    embedder = default_embedder()
    embed_ahead(request.assessment_id, embedder)
    cache = catalog_vectors_for(request, embedder)
    embed_catalog_in_batches(request, cache)  # the first job on this catalogue and model
    cache.vectors(c.id for c in cache.catalog.controls)


class RequirementJudge:
    """The assessment's passages and their reverse ranks loaded once; `judge(control_ids)`
    per requirement."""

    def __init__(
        self, context: JobContext, catalog: LoadedCatalog, control_ids: Iterable[str] = ()
    ) -> None:
        del control_ids  # every control is needed for the reverse check
        self.catalog = catalog
        self.embedder = default_embedder()
        self.index = EvidenceIndex.load(
            context.session, context.request.assessment_id, self.embedder
        )
        self.cache = CatalogVectors(
            catalog, self.embedder, get_settings().resolved_storage_dir / CACHE_DIR
        )
        self.vectors = self.cache.vectors(c.id for c in catalog.controls)
        self.ranks = CatalogRanks(catalog, self.vectors, self.index.texts(), self.index.matrix)
        self.on_topic = on_topic_for(self.embedder.name)
        self.judged = judge_documents(context.session, context.request.assessment_id)
        self.documents = set_aside_documents(self.judged)
        self._sections = [non_normative(p.heading_path, p.text) for p in self.index.passages]
        self._held = [_set_aside(p.text) for p in self.index.passages]
        self._about_document = np.array([s is not None for s in self._sections], dtype=bool)
        self._counts = [held is None for held in self._held]
        self._about = self.ranks.closest()
        self._asked: dict[tuple[str, ...], Judged] = {}

    def families_of(self, document_ids: Iterable[str]) -> set[str]:
        """The families the passages of these documents are most about."""
        wanted = set(document_ids)
        return {
            family
            for passage, family in zip(self.index.passages, self._about, strict=True)
            if family is not None and passage.document_id in wanted
        }

    def judge(self, control_ids: Sequence[str]) -> Judged:
        key = tuple(control_ids)
        if key not in self._asked:
            self._asked[key] = self._judge(list(control_ids))
        return self._asked[key]

    def _judge(self, control_ids: list[str]) -> Judged:
        facets = requirement_facets(self.index, self.catalog, self.vectors, control_ids)
        columns = self.ranks.columns(control_ids)
        if not facets or not columns or not self.index.size:
            return propose([], control_ids, self._title)
        lexical, dense = self.index.scores(facets)
        dense_ranks = self.ranks.dense[:, columns]
        lexical_ranks = self.ranks.lexical[:, columns]
        score = (
            _unit(lexical)
            + _unit(dense)
            + BOOST / np.log2(1 + dense_ranks.min(axis=1).astype(np.float64))
            + BOOST / np.log2(1 + lexical_ranks.min(axis=1).astype(np.float64))
        )
        order = np.lexsort((np.arange(self.index.size), -score))
        lexical_order = _positions(lexical)
        dense_order = _positions(dense)

        def ranked(i: int) -> Ranked:
            return Ranked(
                passage=self.index.passages[i],
                score=float(score[i]),
                similarity=float(dense[i]),
                lexical_rank=int(lexical_order[i]) if lexical[i] > 0 else None,
                dense_rank=int(dense_order[i]),
            )

        # Passages that state a practice come before sections about the document.
        order = order[np.argsort(self._about_document[order], kind="stable")]
        listed = _evidence_list(order, self.index, self._counts, self.documents)
        listed_set = set(listed)
        pool = listed + [int(i) for i in order[:POOL] if int(i) not in listed_set]
        judged = self._checked(pool, columns, ranked)
        candidates = [c for c in judged if c.set_aside is None]
        templates = [c for c in judged if c.set_aside is not None]
        result = propose(candidates, control_ids, self._title, templates)
        # A reviewer reads the listed passages; the rest of the pool only informed the test.
        shown = [c for c, i in zip(judged, pool, strict=True) if i in listed_set]
        return replace(
            result,
            candidates=[c for c in shown if c.set_aside is None],
            templates=result.templates[:5],
        )

    def _checked(
        self, pool: list[int], columns: list[int], ranked: Callable[[int], Ranked]
    ) -> list[Checked]:
        """Each pooled passage with the outcome of each test, for the requirement's families
        (`columns`), computed for the whole pool at once."""
        grid = np.ix_(np.asarray(pool, dtype=np.intp), np.asarray(columns, dtype=np.intp))
        dense = self.ranks.dense[grid].astype(np.int32)
        lexical = self.ranks.lexical[grid].astype(np.int32)
        on_topic = self.ranks.similarity[grid] >= self.on_topic
        near, far = np.minimum(dense, lexical), np.maximum(dense, lexical)
        specific = (near <= SPECIFIC_RANK[0]) & (far <= SPECIFIC_RANK[1]) & on_topic
        related = (near <= RELATED_RANK[0]) & (far <= RELATED_RANK[1]) & on_topic
        nearest = np.argmin(np.where(related, dense + lexical, np.iinfo(np.int32).max), axis=1)
        families = [self.ranks.families[j] for j in columns]
        out = []
        for row, i in enumerate(pool):
            passage = self.index.passages[i]
            j = int(nearest[row])
            out.append(
                Checked(
                    hit=ranked(i),
                    specific=tuple(f for f, ok in zip(families, specific[row], strict=True) if ok),
                    related=tuple(f for f, ok in zip(families, related[row], strict=True) if ok),
                    section=self._sections[i],
                    set_aside=self.documents.get(passage.document_id) or self._held[i],
                    about=self._about[i],
                    closest=(families[j], int(dense[row, j]), int(lexical[row, j])),
                )
            )
        return out

    def _title(self, control_id: str) -> str:
        control = self.catalog.control(control_id)
        return control.title if control else ""

    def method(self) -> dict[str, Any]:
        """How the proposals were reached, for the draft's reader."""
        return {
            "retrieval": "BM25 over heading path and text, and dense cosine, each scaled to "
            "0-1 over the corpus and summed, with a boost for passages specifically about "
            "the requirement's controls; the list names the best passage of each of the "
            f"first {DOCUMENTS} documents, then {FURTHER} further passages",
            "model": self.embedder.name,
            "specific": "a passage is specifically about a control family when, of the "
            f"catalogue's {self.ranks.size} families, BM25 or the dense model ranks that "
            f"family among the passage's own {SPECIFIC_RANK[0]} closest and the other among its "
            f"{SPECIFIC_RANK[1]} closest, at cosine "
            f"{self.on_topic:.2f} or more, outside purpose, scope, references and "
            "definitions sections, in an adopted document",
            "evidence_found": "specific passages for at least two of the requirement's SCF "
            "control families and a third of them (its only one, when it links to one)",
            "catalog_texts_embedded": self.cache.computed,
            "catalog_vectors_reused": len(self.vectors) if not self.cache.computed else 0,
            "note": "proposals are for a reviewer to confirm; people set the assessed status",
        }


def _set_aside(text: str) -> str | None:
    marks = placeholders(text)
    return f"it still holds placeholders ({', '.join(marks[:3])})" if marks else None


def _unit(values: NDArray[np.float64]) -> NDArray[np.float64]:
    low, high = float(values.min()), float(values.max())
    return (values - low) / (high - low) if high > low else np.zeros_like(values)


def _positions(values: NDArray[np.float64]) -> NDArray[np.int64]:
    order = np.argsort(-values, kind="stable")
    positions = np.empty(len(values), dtype=np.int64)
    positions[order] = np.arange(1, len(values) + 1)
    return positions


def _evidence_list(
    order: NDArray[np.intp],
    index: EvidenceIndex,
    counts: list[bool],
    set_aside: dict[str, str],
) -> list[int]:
    """The best passage of each of the first DOCUMENTS documents, then FURTHER passages of
    those documents, in score order; passages of set-aside documents are not listed."""
    best: dict[str, int] = {}
    further: list[int] = []
    for raw in order:
        i = int(raw)
        passage = index.passages[i]
        if passage.document_id in set_aside or not counts[i]:
            continue
        if passage.document_id not in best:
            if len(best) < DOCUMENTS:
                best[passage.document_id] = i
        elif len(further) < FURTHER:
            further.append(i)
        if len(best) >= DOCUMENTS and len(further) >= FURTHER:
            break
    return list(best.values()) + further
