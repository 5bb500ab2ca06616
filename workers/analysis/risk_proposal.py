"""The risk a gap finding proposes for the register: what is at risk, through which
weakness, rated on the register's method, with the reason (which requirement, which
finding, what is missing). A proposal, never a decision: a person accepts it (a risk in
the register), merges it into a risk already held, or rejects it
(orchestrator.service.risk_proposals)."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.risk_method import SCALE_MAX, SCALE_MIN

#: Likelihood from the evidence shortfall: nothing (or an unfilled template, or a person's
#: "not implemented") leaves the weakness open; weak evidence or "partially" leaves part.
_OPEN = {"no_evidence_found", "template_not_adopted", "not_implemented"}
LIKELIHOOD_OPEN, LIKELIHOOD_PARTIAL = 4, 3


def _impact(importance: Any) -> int:
    """The linked SCF controls' highest relative weighting (1-10) halved, on 1-5."""
    try:
        weight = int(importance or 0)
    except (TypeError, ValueError):
        weight = 0
    return max(SCALE_MIN, min(SCALE_MAX, (weight + 1) // 2))


def propose_risk(gap: dict[str, Any]) -> dict[str, Any]:
    """The risk proposed by one (completed) gap finding, with its reason."""
    label = str(gap.get("control_id"))
    title = str(gap.get("title") or label)
    state = str(gap.get("evidence_state"))
    likelihood = LIKELIHOOD_OPEN if state in _OPEN else LIKELIHOOD_PARTIAL
    impact = _impact((gap.get("severity_basis") or {}).get("importance", gap.get("weighting")))
    requirement = {"framework": gap.get("framework"), "requirement_id": gap.get("requirement_id")}
    return {
        "finding": label,
        "title": f"{label} {title} not in place"[:300],
        "asset": f"What {label} ({title}) protects in the organisation's scope",
        "threat": str(gap.get("effect") or ""),
        "vulnerability": str(gap.get("condition") or ""),
        "likelihood": likelihood,
        "impact": impact,
        "rating_basis": (
            f"likelihood {likelihood}: evidence state {state} "
            f"({'nothing in place' if likelihood == LIKELIHOOD_OPEN else 'partly in place'}); "
            f"impact {impact}: the linked SCF controls' highest relative weighting "
            f"{gap.get('weighting')} of 10, halved"
        ),
        "treatment": "modify",
        "treatment_plan": str(gap.get("recommendation") or ""),
        "controls": list(gap.get("scf_controls") or []),
        "requirements": [requirement] if requirement["requirement_id"] else [],
        "reason": {
            "requirement": label,
            "framework": gap.get("framework"),
            "finding": label,
            "severity": gap.get("severity"),
            "evidence_state": state,
            "missing": str(gap.get("condition") or ""),
            "documents": list(gap.get("documents") or []),
        },
    }
