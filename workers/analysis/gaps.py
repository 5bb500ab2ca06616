"""Gap analysis: requirements without evidence (or assessed as not implemented), each a
finding with its criteria (what the requirement asks, in its SCF controls' own words) and
its condition (what the documents show), and a severity from the SCF relative weighting of
its controls and the state of its evidence."""

from __future__ import annotations

from typing import Any

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext
from workers.analysis.catalog import run_scf_catalog
from workers.analysis.proposal import AssessedStatus, Proposal
from workers.inputs import require_artifact, source

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}
# How far the evidence is from showing the requirement: 2 none, 1 weak, 0 partial by people.
_EVIDENCE_GAP = {
    Proposal.NO_EVIDENCE_FOUND.value: 2,
    Proposal.TEMPLATE_NOT_ADOPTED.value: 2,
    Proposal.WEAK_EVIDENCE.value: 1,
}
_ASSESSED_GAP = {
    AssessedStatus.NOT_IMPLEMENTED.value: 2,
    AssessedStatus.PARTIALLY_IMPLEMENTED.value: 1,
}


def severity(weighting: int, evidence_gap: int) -> str:
    """SCF weights controls 1-10 (10: most important). A heavily weighted control with no
    evidence is high; weak evidence, or a lightly weighted control, lowers it one step."""
    band = 2 if weighting >= 8 else (1 if weighting >= 5 else 0)
    score = band + evidence_gap  # 0..4
    return "high" if score >= 4 else ("medium" if score >= 2 else "low")


def create_gap_analysis(context: JobContext) -> dict[str, Any]:
    evidence = require_artifact(context, ArtifactKind.EVIDENCE_ANALYSIS)
    catalog = run_scf_catalog(context)
    gaps: list[dict[str, Any]] = []
    met: list[dict[str, Any]] = []
    for row in evidence.content.get("requirements", []):
        state = _gap_state(row)
        label = f"{row.get('framework')} {row.get('requirement_id')}"
        if state is None:
            met.append(
                {
                    "requirement": label,
                    "proposal": row.get("proposal"),
                    "assessed_status": row.get("assessed_status"),
                }
            )
            continue
        gaps.append(_finding(catalog, row, label, state))
    gaps.sort(
        key=lambda gap: (SEVERITY_ORDER[gap["severity"]], -gap["weighting"], gap["control_id"])
    )
    by_severity = {
        level: sum(1 for g in gaps if g["severity"] == level) for level in SEVERITY_ORDER
    }
    content = {
        "catalog": evidence.content.get("catalog"),
        "attribution": evidence.content.get("attribution"),
        "source": source(evidence),
        "severity_rule": "SCF relative weighting of the linked controls (8-10 high band, "
        "5-7 middle) combined with the evidence state (none or template: "
        "two steps, weak: one step)",
        "gaps": gaps,
        "met": met,
        "summary": {
            "requirements": len(gaps) + len(met),
            "gaps": len(gaps),
            "met": len(met),
            **by_severity,
        },
    }
    return content


def _gap_state(row: dict[str, Any]) -> int | None:
    """None when the requirement is not a gap; else how far its evidence falls short."""
    assessed = row.get("assessed_status")
    if assessed in (AssessedStatus.IMPLEMENTED.value, AssessedStatus.NOT_APPLICABLE.value):
        return None
    if assessed in _ASSESSED_GAP:
        return _ASSESSED_GAP[assessed]
    return _EVIDENCE_GAP.get(str(row.get("proposal")))


def _finding(catalog: LoadedCatalog, row: dict[str, Any], label: str, state: int) -> dict[str, Any]:
    controls = [c for c in (catalog.control(i) for i in row.get("scf_controls", [])) if c]
    weighting = max((int(c.details.get("weighting") or 0) for c in controls), default=0)
    criteria = " ".join(f"{c.id} {c.title}: {c.description}" for c in controls[:3])
    if len(controls) > 3:
        criteria += f" (and {len(controls) - 3} more linked SCF controls)"
    condition = str(row.get("reason", ""))
    if row.get("assessed_status"):
        condition = f"assessed {row['assessed_status']} by a reviewer; {condition}"
    best = (row.get("evidence") or [{}])[0]
    return {
        "control_id": label,  # the report's first column names the finding
        "framework": row.get("framework"),
        "requirement_id": row.get("requirement_id"),
        "title": row.get("title") or (controls[0].title if controls else label),
        "scf_controls": [c.id for c in controls],
        "weighting": weighting,
        "evidence_state": row.get("assessed_status") or row.get("proposal"),
        "severity": severity(weighting, state),
        "criteria": criteria or "no SCF control is linked to this requirement",
        "condition": condition,
        "best_score": float(best.get("similarity", 0.0)),
        "finding": f"Criteria: {criteria or label}. Condition: {condition}.",
    }
