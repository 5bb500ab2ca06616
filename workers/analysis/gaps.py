"""Gap analysis: applicable controls whose best evidence falls short of the threshold."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext, JobResult
from workers.analysis.output import publish
from workers.analysis.scoring import EVIDENCE_THRESHOLD, is_gap, severity
from workers.inputs import require_artifact, source

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}


def create_gap_analysis(context: JobContext) -> JobResult:
    evidence = require_artifact(context, ArtifactKind.EVIDENCE_ANALYSIS)
    gaps: list[dict[str, Any]] = []
    met: list[dict[str, Any]] = []
    for control in evidence.content.get("controls", []):
        score = float(control.get("best_score", 0.0))
        entry = {key: control.get(key) for key in ("control_id", "domain", "domain_name",
                                                    "title")}
        if is_gap(score):
            gaps.append({**entry, "best_score": score, "severity": severity(score),
                         "finding": _finding(control, score)})
        else:
            met.append({**entry, "best_score": score, "coverage": control.get("coverage")})
    gaps.sort(key=lambda gap: (SEVERITY_ORDER[gap["severity"]], gap["control_id"]))
    by_severity = {level: sum(1 for g in gaps if g["severity"] == level)
                   for level in SEVERITY_ORDER}
    content = {
        "source": source(evidence),
        "threshold": EVIDENCE_THRESHOLD,
        "gaps": gaps,
        "met": met,
        "summary": {"controls": len(gaps) + len(met), "gaps": len(gaps), "met": len(met),
                    **by_severity},
    }
    return publish(context, ArtifactKind.GAP_ANALYSIS, content)


def _finding(control: dict[str, Any], score: float) -> str:
    citations = control.get("citations") or []
    if not citations:
        return f"No document in the knowledge base relates to {control.get('title')}."
    nearest = citations[0]
    where = nearest.get("filename", "?")
    if nearest.get("heading_path"):
        where += f" ({nearest['heading_path']})"
    return (f"Evidence for {control.get('title')} is insufficient: the closest passage, in "
            f"{where}, scores {score:.2f} against a threshold of {EVIDENCE_THRESHOLD:.2f}.")
