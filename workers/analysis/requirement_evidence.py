"""Asking the knowledge base about requirements: the evidence list and its proposal.

Per requirement, every passage is scored by BM25 and by dense cosine over the texts of
its linked SCF controls. Documents are ranked by their best passages
(`document_ranking`); the evidence list names the first ten documents, each with its best
passage that states a practice (never a heading, banner, list of links or requirement
ids, a section about the document, an index or crosswalk, nor a quote of the control's
own text: those come last, marked), then further passages of those documents. Which
passage of a document is shown is its passage score: both methods on one scale (each
min-max over the corpus) summed, with a boost for passages specifically about the
requirement's controls (the reverse check, `catalog_ranks`). The proposal is judged from
the passages of that list and the best of the rest (`proposal`), independently of the
list's length. Documents not adopted (templates, drafts) are judged whole
(`document_judgement`): their passages are never listed as evidence.

The SoA and the evidence analysis ask the same way; a set of linked controls is asked
once per job, however many requirements (or control rows) share it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.config.settings import get_settings
from orchestrator.contracts.jobs import JobRequest
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext
from orchestrator.knowledge.embedder import default_embedder
from orchestrator.knowledge.hybrid import EvidenceIndex, Facet, Ranked
from orchestrator.knowledge.lexical import terms
from orchestrator.knowledge.vectors import embed_ahead
from workers.analysis.catalog_batches import catalog_vectors_for, embed_catalog_in_batches
from workers.analysis.catalog_ranks import CatalogRanks
from workers.analysis.document_judgement import judge_documents
from workers.analysis.document_ranking import DocumentRanking, Signals, closeness, unit
from workers.analysis.document_set_aside import set_aside_documents
from workers.analysis.framework_quotes import ControlQuotes, index_documents, shingles
from workers.analysis.passage_quote import Sentences, quote, sentences
from workers.analysis.proposal import (
    RELATED_RANK,
    SPECIFIC_RANK,
    Checked,
    Judged,
    on_topic_for,
    propose,
)
from workers.analysis.requirement_query import (
    CACHE_DIR,
    CatalogVectors,
    catalog_specificity,
    control_texts,
    requirement_facets,
)
from workers.analysis.sections import non_normative
from workers.inputs import latest_artifact

DOCUMENTS = 10  # the evidence list names this many distinct documents
FURTHER = 5  # and then this many more passages of those documents
POOL = 50  # passages judged beyond the list: a specific passage may rank lower
BOOST = 0.25  # weight of the reverse check in the ranking, per method


def prepare_retrieval(request: JobRequest) -> None:
    """The drafting job's `Prepare`: embed the chunks the current model has not seen and
    the catalogue's control texts neither the cache nor the package has (a minute for a
    whole catalogue on one core, in batches any analysis worker may take) before the
    job's transaction opens, so it never holds its locks through that. Every control is
    embedded, not only those in scope: the reverse check ranks them all."""
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
        passages = self.index.passages
        indexes = index_documents((p.document_id, p.text) for p in passages)
        self._sections = [
            non_normative(p.heading_path, p.text) or indexes.get(p.document_id) for p in passages
        ]
        self._about = self.ranks.closest()
        self._asked: dict[tuple[str, ...], Judged] = {}
        self._quotes = ControlQuotes(self._control_texts)
        self._shingles: dict[int, frozenset[tuple[str, ...]]] = {}
        self._sentences: dict[int, Sentences] = {}
        self._weight = catalog_specificity(catalog)
        self.ranking = DocumentRanking([p.document_id for p in passages])
        self._context = context
        self._calibrated = False
        self._calibrating = threading.Lock()  # batches of one job may share this judge

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
        with self._calibrating:
            if not self._calibrated:
                self._calibrate()
        if key not in self._asked:
            self._asked[key] = self._judge(list(control_ids))
        return self._asked[key]

    def signals(self, control_ids: Sequence[str]) -> Signals | None:
        """What every passage scores for these controls (None: nothing to ask with, or
        nothing to ask)."""
        facets = requirement_facets(self.index, self.catalog, self.vectors, control_ids)
        return self._signals(facets, self.ranks.columns(control_ids))

    def _signals(self, facets: list[Facet], columns: list[int]) -> Signals | None:
        if not facets or not columns or not self.index.size:
            return None
        lexical, dense = self.index.scores(facets)
        return Signals(lexical, dense, self.ranks.dense[:, columns], self.ranks.lexical[:, columns])

    def _judge(self, control_ids: list[str]) -> Judged:
        facets = requirement_facets(self.index, self.catalog, self.vectors, control_ids)
        columns = self.ranks.columns(control_ids)
        signals = self._signals(facets, columns)
        if signals is None:
            return propose([], control_ids, self._title)
        lexical, dense = signals.lexical, signals.dense
        dense_ranks, lexical_ranks = signals.dense_ranks, signals.lexical_ranks
        score = (
            unit(lexical)
            + unit(dense)
            + BOOST * closeness(dense_ranks.min(axis=1))
            + BOOST * closeness(lexical_ranks.min(axis=1))
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

        sections = self._sections_for(control_ids)
        listed = self._evidence_list(self.ranking.order(signals), score, sections)
        listed_set = set(listed)
        pool = listed + [int(i) for i in order[:POOL] if int(i) not in listed_set]
        wanted = set(terms(" ".join(f.text for f in facets)))
        judged = self._checked(pool, columns, ranked, sections, wanted)
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
        self,
        pool: list[int],
        columns: list[int],
        ranked: Callable[[int], Ranked],
        sections: Callable[[int], str | None],
        wanted: set[str],
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
                    section=sections(i),
                    set_aside=self.documents.get(passage.document_id),
                    about=self._about[i],
                    closest=(families[j], int(dense[row, j]), int(lexical[row, j])),
                    quote=quote(self._sentences_of(i), wanted, self._weight),
                )
            )
        return out

    def _calibrate(self) -> None:
        """Each document's scores over the requirements in scope (the run's scope draft):
        what `DocumentRanking` measures a document against."""
        self._calibrated = True
        scope = latest_artifact(
            self._context.session, self._context.request.run_id, ArtifactKind.SCOPE
        )
        if scope is None or not self.index.size:
            return
        keys = {
            tuple(str(c) for c in requirement.get("controls", []))
            for framework in scope.content.get("frameworks", [])
            for requirement in framework.get("requirements", [])
        }
        references = []
        for key in sorted(k for k in keys if k):
            facets = requirement_facets(self.index, self.catalog, self.vectors, key)
            columns = self.ranks.columns(key)
            if facets and columns:
                lexical, dense = self.index.scores(facets)
                ranks = (self.ranks.dense[:, columns], self.ranks.lexical[:, columns])
                references.append(Signals(lexical, dense, *ranks))
        self.ranking.calibrate(references)

    def _sections_for(self, control_ids: Sequence[str]) -> Callable[[int], str | None]:
        """Why a passage does not count on its own for these controls, if it does not:
        a section about the document, an index, or a quote of a control's own text."""

        def section(i: int) -> str | None:
            known = self._sections[i]
            if known is not None:
                return known
            if i not in self._shingles:
                self._shingles[i] = shingles(self.index.passages[i].text)
            quoted = self._quotes.quoted(self._shingles[i], control_ids)
            if quoted is not None:
                return f"it repeats the text of {quoted} itself, which proves nothing"
            return None

        return section

    def _evidence_list(
        self,
        documents: list[str],
        score: NDArray[np.float64],
        sections: Callable[[int], str | None],
    ) -> list[int]:
        """The first DOCUMENTS documents in order, each with its best passage that states a
        practice (documents with none come after those with one), then FURTHER passages of
        those documents by passage score; set-aside documents are not listed."""
        stating: list[int] = []
        others: list[int] = []
        for document_id in documents:
            if document_id in self.documents:
                continue
            own = sorted(self.ranking.passages[document_id], key=lambda i: (-score[i], i))
            normative = next((i for i in own if sections(i) is None), None)
            if normative is not None:
                stating.append(normative)
            else:
                others.append(own[0])
            if len(stating) >= DOCUMENTS:
                break
        best = (stating + others)[:DOCUMENTS]
        chosen = set(best)
        listed_documents = {self.index.passages[i].document_id for i in best}
        further = [
            i
            for i in np.lexsort((np.arange(len(score)), -score))
            if int(i) not in chosen and self.index.passages[int(i)].document_id in listed_documents
        ][:FURTHER]
        return best + [int(i) for i in further]

    def _sentences_of(self, i: int) -> Sentences:
        if i not in self._sentences:
            self._sentences[i] = sentences(self.index.passages[i].text)
        return self._sentences[i]

    def _control_texts(self, control_id: str) -> list[str]:
        control = self.catalog.control(control_id)
        return control_texts(self.catalog, control) if control is not None else []

    def _title(self, control_id: str) -> str:
        control = self.catalog.control(control_id)
        return control.title if control else ""

    def method(self) -> dict[str, Any]:
        """How the proposals were reached, for the draft's reader."""
        return {
            "retrieval": "documents ranked by their best passage by BM25 over heading path "
            "and text and by dense cosine, each scaled to 0-1 over the documents and summed, "
            "by how close the document comes to each of the requirement's control families "
            "among the whole catalogue's, and by how much more the document is about this "
            "requirement than about the others in scope; the list names the first "
            f"{DOCUMENTS} documents, each with its best passage that states a practice, "
            f"then {FURTHER} further passages",
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


def _positions(values: NDArray[np.float64]) -> NDArray[np.int64]:
    order = np.argsort(-values, kind="stable")
    positions = np.empty(len(values), dtype=np.int64)
    positions[order] = np.arange(1, len(values) + 1)
    return positions
