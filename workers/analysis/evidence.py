"""Evidence analysis: per requirement in scope and per linked SCF control, the passages that
support it (hybrid retrieval), and a proposed status with its reason."""

from __future__ import annotations

from collections import Counter
from typing import Any

from orchestrator.config.settings import get_settings
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext, JobResult
from orchestrator.knowledge.embedder import default_embedder
from orchestrator.knowledge.hybrid import RRF_K, EvidenceIndex
from workers.analysis.catalog import run_scf_catalog
from workers.analysis.output import publish
from workers.analysis.proposal import AGREEMENT_RANK, Judged, Proposal, propose, scale_for
from workers.analysis.requirement_query import CatalogVectors, requirement_facets
from workers.inputs import require_artifact, source

RANKED = 10
# The retriever's view of the catalogue vectors outlives the job: same catalogue, same model.
CACHE_DIR = "catalog-vectors"
_COVERAGE = {Proposal.EVIDENCE_FOUND: "strong", Proposal.WEAK_EVIDENCE: "partial"}


def run_evidence_analysis(context: JobContext) -> JobResult:
    soa = require_artifact(context, ArtifactKind.SOA)
    scope = require_artifact(context, ArtifactKind.SCOPE)
    catalog = run_scf_catalog(context)
    embedder = default_embedder()
    index = EvidenceIndex.load(context.session, context.request.assessment_id, embedder)
    applicable = {
        str(c["control_id"]): c for c in soa.content.get("controls", []) if c.get("applicable")
    }
    cache = CatalogVectors(catalog, embedder, get_settings().resolved_storage_dir / CACHE_DIR)
    vectors = cache.vectors(applicable)

    scale = scale_for(embedder.name)

    asked: dict[tuple[str, ...], Judged] = {}

    def judge(control_ids: list[str]) -> Judged:
        # A requirement linked to the same controls as another (or as one control's own
        # row) gets the same answer: asked once.
        key = tuple(control_ids)
        if key not in asked:
            facets = requirement_facets(index, catalog, vectors, control_ids)
            asked[key] = propose(index.rank(facets, k=RANKED), scale)
        return asked[key]

    controls = []
    for control_id, row in applicable.items():
        judged = judge([control_id])
        known = catalog.control(control_id)
        controls.append(
            {
                **{key: row.get(key) for key in ("control_id", "domain", "domain_name", "title")},
                "weighting": known.details.get("weighting") if known else None,
                **_judgement(judged),
            }
        )
    requirements = [
        _requirement(framework, requirement, applicable, judge)
        for framework in scope.content.get("frameworks", [])
        for requirement in framework.get("requirements", [])
    ]
    by_requirement = Counter(r["proposal"] for r in requirements)
    by_control = Counter(c["proposal"] for c in controls)
    content = {
        "catalog": scope.content.get("catalog"),
        "attribution": scope.content.get("attribution"),
        "sources": [source(soa), source(scope)],
        "method": {
            "retrieval": "hybrid: BM25 over heading path and text, and dense cosine, "
            f"fused by reciprocal rank (k={RRF_K})",
            "model": embedder.name,
            "agreement_rank": AGREEMENT_RANK,
            "on_topic_similarity": scale[0],
            "clear_similarity": scale[1],
            "catalog_texts_embedded": cache.computed,
            "catalog_vectors_reused": len(vectors) if not cache.computed else 0,
            "note": "proposals are for a reviewer to confirm; people set the assessed status",
        },
        "kb_passages": index.size,
        "requirements": requirements,
        "controls": controls,
        "summary": {
            "requirements": len(requirements),
            "controls": len(controls),
            **{p.value: by_requirement[p.value] for p in Proposal},
            "controls_with_evidence": by_control[Proposal.EVIDENCE_FOUND.value],
            "template_passages_set_aside": len(
                {t["chunk_id"] for c in controls for t in c["template_passages"]}
            ),
        },
    }
    return publish(context, ArtifactKind.EVIDENCE_ANALYSIS, content)


def _judgement(judged: Judged) -> dict[str, Any]:
    best = judged.evidence[0].similarity if judged.evidence else 0.0
    return {
        "proposal": judged.proposal.value,
        "reason": judged.reason,
        "evidence": [hit.citation() for hit in judged.evidence],
        "template_passages": [
            hit.citation() | {"marked": "template_not_adopted"} for hit in judged.templates
        ],
        # The shape earlier readers (report, gap analysis) know.
        "best_score": round(best, 4),
        "coverage": _COVERAGE.get(judged.proposal, "none"),
    }


def _requirement(
    framework: dict[str, Any], requirement: dict[str, Any], applicable: dict[str, Any], judge: Any
) -> dict[str, Any]:
    linked = [c for c in requirement.get("controls", []) if c in applicable]
    head = {
        "framework": framework.get("name"),
        "requirement_id": requirement.get("requirement_id"),
        "title": requirement.get("title", ""),
        "scf_controls": linked,
    }
    if not linked:
        return {
            **head,
            "proposal": Proposal.NO_EVIDENCE_FOUND.value,
            "reason": "no applicable SCF control links to this requirement",
            "evidence": [],
            "template_passages": [],
        }
    judged = judge(linked)
    row = _judgement(judged)
    return {**head, **{k: row[k] for k in ("evidence", "proposal", "reason", "template_passages")}}
