"""SCF pre-analysis: how well the uploaded documents already speak to each control."""

from __future__ import annotations

from collections import Counter
from typing import Any

from orchestrator.catalog.model import CatalogControl
from orchestrator.catalog.scoping import catalog_reference
from orchestrator.jobs.interface import JobContext
from orchestrator.knowledge.embedder import HashingEmbedder
from orchestrator.knowledge.vectors import KnowledgeBase
from workers.analysis.catalog import run_scf_catalog
from workers.analysis.drafting import drafts
from workers.analysis.scoring import (
    EVIDENCE_THRESHOLD,
    STRONG_THRESHOLD,
    TOP_EVIDENCE,
    coverage,
)


@drafts("scf_pre_analysis")
def run_scf_pre_analysis(context: JobContext) -> dict[str, Any]:
    # A quick triage of every catalogue control (over a thousand) before scoping: exact
    # term overlap, computed in memory. The evidence analysis then asks the dense model
    # too, for the requirements in scope only.
    embedder = HashingEmbedder()
    kb = KnowledgeBase.computed(
        context.session, context.request.assessment_id, embedder, evidence_only=True
    )
    catalog = run_scf_catalog(context)
    rows = [_assess(kb, control) for control in catalog.controls]
    counts = Counter(row["coverage"] for row in rows)
    content = {
        "method": {
            "kind": "kb_search",
            "model": embedder.name,
            "top_k": TOP_EVIDENCE,
            "evidence_threshold": EVIDENCE_THRESHOLD,
            "strong_threshold": STRONG_THRESHOLD,
        },
        "catalog": catalog_reference(catalog),
        "kb_chunks": kb.size,
        "controls": rows,
        "summary": {
            "controls": len(rows),
            "strong": counts["strong"],
            "partial": counts["partial"],
            "none": counts["none"],
        },
    }
    return content


def _assess(kb: KnowledgeBase, control: CatalogControl) -> dict[str, Any]:
    hits = kb.search(control.search_query, k=TOP_EVIDENCE)
    best = hits[0].score if hits else 0.0
    return {
        **control.header(),
        "best_score": best,
        "coverage": coverage(best),
        "evidence_chunk_ids": [hit.chunk_id for hit in hits],
    }
