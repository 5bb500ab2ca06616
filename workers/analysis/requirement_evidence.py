"""Asking the knowledge base about requirements: hybrid retrieval over the texts of each
requirement's linked SCF controls, judged into a proposal with its reason.

The SoA and the evidence analysis ask the same way; a set of linked controls is asked
once per job, however many requirements (or control rows) share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.config.settings import get_settings
from orchestrator.jobs.interface import JobContext
from orchestrator.knowledge.embedder import default_embedder
from orchestrator.knowledge.hybrid import RRF_K, EvidenceIndex
from workers.analysis.proposal import AGREEMENT_RANK, Judged, propose, scale_for
from workers.analysis.requirement_query import CatalogVectors, requirement_facets

RANKED = 10
# The retriever's view of the catalogue vectors outlives the job: same catalogue, same model.
CACHE_DIR = "catalog-vectors"


class RequirementJudge:
    """The assessment's passages loaded once; `judge(control_ids)` per requirement."""

    def __init__(
        self, context: JobContext, catalog: LoadedCatalog, control_ids: Iterable[str]
    ) -> None:
        self.catalog = catalog
        self.embedder = default_embedder()
        self.index = EvidenceIndex.load(
            context.session, context.request.assessment_id, self.embedder
        )
        self.cache = CatalogVectors(
            catalog, self.embedder, get_settings().resolved_storage_dir / CACHE_DIR
        )
        self.vectors = self.cache.vectors(control_ids)
        self.scale = scale_for(self.embedder.name)
        self._asked: dict[tuple[str, ...], Judged] = {}

    def judge(self, control_ids: Sequence[str]) -> Judged:
        key = tuple(control_ids)
        if key not in self._asked:
            facets = requirement_facets(self.index, self.catalog, self.vectors, control_ids)
            self._asked[key] = propose(self.index.rank(facets, k=RANKED), self.scale)
        return self._asked[key]

    def method(self) -> dict[str, Any]:
        """How the proposals were reached, for the draft's reader."""
        return {
            "retrieval": "hybrid: BM25 over heading path and text, and dense cosine, "
            f"fused by reciprocal rank (k={RRF_K})",
            "model": self.embedder.name,
            "agreement_rank": AGREEMENT_RANK,
            "on_topic_similarity": self.scale[0],
            "clear_similarity": self.scale[1],
            "catalog_texts_embedded": self.cache.computed,
            "catalog_vectors_reused": len(self.vectors) if not self.cache.computed else 0,
            "note": "proposals are for a reviewer to confirm; people set the assessed status",
        }
