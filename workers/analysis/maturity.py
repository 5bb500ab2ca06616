"""Maturity: a capability level (SCF C|P-CMM 0-5) per domain, from evidence and gaps.

The rule, per domain, over its applicable controls:
  5  every control has strong evidence
  4  every control has evidence
  3  at least two thirds have evidence
  2  at least one third has evidence
  1  less than that, but something in the KB relates to the domain
  0  nothing relates to it at all (every gap is high severity)
A high-severity gap caps the domain at level 2: one undocumented control is a hole.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext, JobResult
from workers.analysis.output import publish
from workers.inputs import require_artifact, source

LABELS = {0: "Not Performed", 1: "Performed Informally", 2: "Planned & Tracked",
          3: "Well Defined", 4: "Quantitatively Controlled", 5: "Continuously Improving"}
HIGH_GAP_CAP = 2


def create_maturity_assessment(context: JobContext) -> JobResult:
    evidence = require_artifact(context, ArtifactKind.EVIDENCE_ANALYSIS)
    gap_analysis = require_artifact(context, ArtifactKind.GAP_ANALYSIS)
    # The (approved) gap analysis is the authority on what is a gap.
    gaps = {gap["control_id"]: gap for gap in gap_analysis.content.get("gaps", [])}
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for control in evidence.content.get("controls", []):
        by_domain[str(control.get("domain"))].append(control)
    domains = [_rate(code, controls, gaps) for code, controls in sorted(by_domain.items())]
    levels = [domain["level"] for domain in domains]
    overall = round(sum(levels) / len(levels), 1) if levels else 0.0
    content = {
        "scale": "SCF C|P-CMM 0-5",
        "sources": [source(evidence), source(gap_analysis)],
        "domains": domains,
        "overall_level": overall,
        "summary": {"domains": len(domains), "overall_level": overall,
                    "lowest_level": min(levels, default=0)},
    }
    return publish(context, ArtifactKind.MATURITY_ASSESSMENT, content)


def level_for(controls: int, with_evidence: int, strong: int, high_gaps: int) -> int:
    if controls == 0 or (with_evidence == 0 and high_gaps == controls):
        return 0
    share = with_evidence / controls
    if strong == controls:
        level = 5
    elif share == 1:
        level = 4
    elif share >= 2 / 3:
        level = 3
    else:
        level = 2 if share >= 1 / 3 else 1
    return min(level, HIGH_GAP_CAP) if high_gaps else level


def _rate(code: str, controls: list[dict[str, Any]],
          gaps: dict[str, dict[str, Any]]) -> dict[str, Any]:
    in_gap = [c for c in controls if c.get("control_id") in gaps]
    with_evidence = len(controls) - len(in_gap)
    strong = sum(1 for c in controls
                 if c.get("coverage") == "strong" and c.get("control_id") not in gaps)
    high = sum(1 for c in in_gap if gaps[c["control_id"]].get("severity") == "high")
    level = level_for(len(controls), with_evidence, strong, high)
    return {
        "domain": code, "name": controls[0].get("domain_name", code),
        "controls": len(controls), "with_evidence": with_evidence, "strong": strong,
        "gaps": len(in_gap), "high_severity_gaps": high, "level": level,
        "label": LABELS[level],
        "rationale": (f"{with_evidence} of {len(controls)} applicable controls have evidence "
                      f"({strong} strong); {len(in_gap)} gaps, {high} of high severity."),
    }
