"""Evidence analysis: for each applicable control, the KB passages that best support it."""

from __future__ import annotations

from typing import Any

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext, JobResult
from workers.analysis.catalog import run_scf_catalog
from workers.analysis.output import publish
from workers.analysis.scoring import EVIDENCE_THRESHOLD, TOP_EVIDENCE, coverage
from workers.inputs import require_artifact, source
from workers.kb_index.store import KnowledgeBase


def run_evidence_analysis(context: JobContext) -> JobResult:
    soa = require_artifact(context, ArtifactKind.SOA)
    # The SoA itself is in the KB by now: it states applicability, it proves nothing.
    kb = KnowledgeBase.load(context.session, context.request.assessment_id, evidence_only=True)
    catalog = run_scf_catalog(context)
    rows = [_analyse(kb, catalog, control) for control in soa.content.get("controls", [])
            if control.get("applicable")]
    supported = sum(1 for row in rows if row["best_score"] >= EVIDENCE_THRESHOLD)
    content = {
        "source": source(soa),
        "evidence_threshold": EVIDENCE_THRESHOLD,
        "controls": rows,
        "summary": {"controls": len(rows), "with_evidence": supported,
                    "without_evidence": len(rows) - supported,
                    "citations": sum(len(row["citations"]) for row in rows)},
    }
    return publish(context, ArtifactKind.EVIDENCE_ANALYSIS, content)


def _analyse(kb: KnowledgeBase, catalog: LoadedCatalog,
             control: dict[str, Any]) -> dict[str, Any]:
    known = catalog.control(str(control.get("control_id")))
    query = known.search_query if known else str(control.get("title", ""))
    hits = kb.search(query, k=TOP_EVIDENCE)
    best = hits[0].score if hits else 0.0
    entry = {key: control.get(key) for key in ("control_id", "domain", "domain_name", "title")}
    return {**entry, "best_score": best, "coverage": coverage(best),
            "citations": [hit.as_dict() | {"supports": hit.score >= EVIDENCE_THRESHOLD}
                          for hit in hits]}
