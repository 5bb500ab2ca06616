"""Evidence analysis: per requirement in scope and per linked SCF control, the passages that
support it (hybrid retrieval), and a proposed status with its reason."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from typing import Any

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext
from workers.analysis.catalog import run_scf_catalog
from workers.analysis.drafting import drafts
from workers.analysis.judged_ahead import Judgement, Key, judged_ahead
from workers.analysis.proposal import Checked, Judged, Proposal, proposal_counts
from workers.analysis.requirement_evidence import RequirementJudge
from workers.analysis.shared_judge import judge_for
from workers.basis import basis_of
from workers.inputs import require_artifact, source
from workers.soa_content import applicable_controls, row_key, soa_rows

_COVERAGE = {Proposal.EVIDENCE_FOUND: "strong", Proposal.WEAK_EVIDENCE: "partial"}
#: What reviewers set on an SoA row, as the evidence row names it.
_FROM_SOA = {
    "implementation_status": "assessed_status",
    "owner": "owner",
    "target_date": "target_date",
}


def judgement_keys(soa: dict[str, Any], scope: dict[str, Any]) -> list[Key]:
    """What the draft judges, in its order: each applicable control, then each applicable
    requirement's linked controls (once per distinct set)."""
    applicable = applicable_controls(soa)
    decided = {row_key(row): row for row in soa_rows(soa)}
    keys: dict[Key, None] = {(control_id,): None for control_id in applicable}
    for framework in scope.get("frameworks", []):
        for requirement in framework.get("requirements", []):
            row = decided.get((str(framework.get("name")), str(requirement.get("requirement_id"))))
            linked = _linked(requirement, applicable)
            if linked and (row or {}).get("applicable") is not False:
                keys[tuple(linked)] = None
    return list(keys)


def judgement_of(judge: RequirementJudge, key: Key) -> Judgement:
    return _judgement(judge.judge(list(key)))


@drafts("evidence_analysis")
def run_evidence_analysis(context: JobContext) -> dict[str, Any]:
    soa = require_artifact(context, ArtifactKind.SOA)
    scope = require_artifact(context, ArtifactKind.SCOPE)
    catalog = run_scf_catalog(context)
    applicable = applicable_controls(soa.content)
    decided = {row_key(row): row for row in soa_rows(soa.content)}
    # Judgements other analysis workers computed from these same inputs (fanned out), and
    # the judge this job's batches used in this process, if they ran here.
    basis = basis_of(context.session, context.request.run_id, context.request.assessment_id)
    ahead = judged_ahead(context, basis)
    judge = judge_for(context, catalog, basis)

    def judgement(key: Key) -> Judgement:
        if key not in ahead:
            ahead[key] = judgement_of(judge, key)
        return copy.deepcopy(ahead[key])  # rows never share their lists

    controls = []
    for control_id, row in applicable.items():
        known = catalog.control(control_id)
        controls.append(
            {
                **{key: row.get(key) for key in ("control_id", "domain", "domain_name", "title")},
                "weighting": known.details.get("weighting") if known else None,
                **judgement((control_id,)),
            }
        )
    requirements = [
        _requirement(framework, requirement, applicable, judgement, decided)
        for framework in scope.content.get("frameworks", [])
        for requirement in framework.get("requirements", [])
    ]
    by_requirement = Counter(r["proposal"] for r in requirements)
    by_control = Counter(c["proposal"] for c in controls)
    frameworks = [
        {"framework": str(f.get("name")), **proposal_counts(requirements, str(f.get("name")))}
        for f in scope.content.get("frameworks", [])
    ]
    content = {
        "catalog": scope.content.get("catalog"),
        "attribution": scope.content.get("attribution"),
        "sources": [source(soa), source(scope)],
        "method": judge.method(),
        "kb_passages": judge.index.size,
        # Each document's kind and adoption, as judged or as a reviewer set it: what the
        # maturity draft's cap reads.
        "documents": [j.as_row() for j in judge.judged.values()],
        "requirements": requirements,
        "controls": controls,
        "summary": {
            "requirements": len(requirements),
            "controls": len(controls),
            **{p.value: by_requirement[p.value] for p in Proposal},
            "not_applicable": by_requirement[None],
            "controls_with_evidence": by_control[Proposal.EVIDENCE_FOUND.value],
            "template_passages_set_aside": len(
                {t["chunk_id"] for c in controls for t in c["template_passages"]}
            ),
            "frameworks": frameworks,
        },
    }
    return content


def _judgement(judged: Judged) -> dict[str, Any]:
    best = judged.evidence[0].similarity if judged.evidence else 0.0
    return {
        "proposal": judged.proposal.value,
        "reason": judged.reason,
        "families_addressed": list(judged.families),
        "evidence": [hit.citation() for hit in judged.evidence],
        "candidates": [
            c.hit.citation()
            | {
                "verdict": c.verdict(),
                "supports": c.hit in judged.evidence,
                "quote": c.quote,
                # The ranks behind the verdict, for those who want them; reasons use words.
                "closest_family": _closest(c),
            }
            for c in judged.candidates
        ],
        "template_passages": [
            hit.citation() | {"marked": "template_not_adopted"} for hit in judged.templates
        ],
        # The shape earlier readers (report, gap analysis) know.
        "best_score": round(best, 4),
        "coverage": _COVERAGE.get(judged.proposal, "none"),
    }


def _closest(checked: Checked) -> dict[str, Any] | None:
    if checked.closest is None:
        return None
    family, by_meaning, by_words = checked.closest
    return {"family": family, "rank_by_meaning": by_meaning, "rank_by_words": by_words}


def _requirement(
    framework: dict[str, Any],
    requirement: dict[str, Any],
    applicable: dict[str, Any],
    judgement: Callable[[Key], Judgement],
    decided: dict[tuple[str, str], dict[str, Any]],
) -> dict[str, Any]:
    linked = _linked(requirement, applicable)
    head = {
        "framework": framework.get("name"),
        "requirement_id": requirement.get("requirement_id"),
        "title": requirement.get("title", ""),
        "scf_controls": linked,
    }
    # The approved SoA's row: what reviewers decided about the requirement stands here.
    row = decided.get((str(head["framework"]), str(head["requirement_id"])), {})
    head |= {ours: row[theirs] for theirs, ours in _FROM_SOA.items() if row.get(theirs)}
    if row.get("applicable") is False:
        return {
            **head,
            "applicable": False,
            "assessed_status": "not_applicable",
            "justification": row.get("justification"),
            "proposal": None,
            "reason": "not applicable in the approved Statement of Applicability",
            "evidence": [],
            "template_passages": [],
        }
    if not linked:
        return {
            **head,
            "proposal": Proposal.NO_EVIDENCE_FOUND.value,
            "reason": "no applicable SCF control links to this requirement",
            "evidence": [],
            "template_passages": [],
        }
    row = judgement(tuple(linked))
    keys = ("evidence", "candidates", "families_addressed", "proposal", "reason")
    return {**head, **{k: row[k] for k in (*keys, "template_passages")}}


def _linked(requirement: dict[str, Any], applicable: dict[str, Any]) -> list[str]:
    return [c for c in requirement.get("controls", []) if c in applicable]
