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
from orchestrator.contracts.jobs import JobRequest
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.session import read_transaction
from orchestrator.jobs.interface import JobContext
from orchestrator.knowledge.embedder import default_embedder
from orchestrator.knowledge.hybrid import RRF_K, EvidenceIndex
from orchestrator.knowledge.vectors import embed_ahead
from workers.analysis.catalog import run_scf_catalog
from workers.analysis.proposal import AGREEMENT_RANK, Judged, propose, scale_for
from workers.analysis.requirement_query import CatalogVectors, requirement_facets
from workers.inputs import require_artifact

RANKED = 10
# The retriever's view of the catalogue vectors outlives the job: same catalogue, same model.
CACHE_DIR = "catalog-vectors"


def prepare_retrieval(request: JobRequest) -> None:
    """The drafting job's `Prepare`: embed the chunks the current model has not seen and
    the in-scope controls' texts the cache lacks (a minute for a whole catalogue on CPU)
    before the job's transaction opens, so it never holds its locks through that."""
    embedder = default_embedder()
    embed_ahead(request.assessment_id, embedder)
    storage = get_settings().resolved_storage_dir
    with read_transaction() as session:
        context = JobContext(request=request, session=session, storage_dir=storage)
        catalog = run_scf_catalog(context)
        scope = require_artifact(context, ArtifactKind.SCOPE).content
        control_ids = [
            str(control["control_id"])
            for domain in scope.get("domains", [])
            for control in domain.get("controls", [])
        ]
    CatalogVectors(catalog, embedder, storage / CACHE_DIR).vectors(control_ids)


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
