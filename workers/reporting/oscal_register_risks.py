"""The register's risks in OSCAL: each risk a person accepted from (or merged with) the
run's gap findings, as the assessment results and the POA&M both carry it (its asset,
threat and weakness, its likelihood and impact on the register's method and FedRAMP's
scale, its treatment), and which findings each is linked to."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.fedramp_settings import FEDRAMP_SYSTEM
from orchestrator.contracts.risk_method import METHOD_NAME as RISK_METHOD
from workers.reporting.oscal_parts import NS, actors, party_uuid, stable_uuid


def register_risk(base: str, risk: dict[str, Any]) -> dict[str, Any]:
    """A register risk a person accepted from (or merged with) gap findings: what is at
    risk, from what, through which weakness; its likelihood and impact on the register's
    1-5 scales (with the level they make) as facets of the register's method, whose origin
    is the person who decided the finding's proposal; its treatment as the response."""
    risk_id = str(risk["risk_id"])
    uuid = stable_uuid(base, "register-risk", risk_id)
    deciders = [str(d["decided_by"]) for d in risk.get("decisions", []) if d.get("decided_by")]
    accepted = risk.get("accepted_by")
    return {
        "uuid": uuid,
        "title": str(risk["title"]),
        "description": f"Asset or process: {risk['asset']}. Threat: {risk['threat']}. "
        f"Vulnerability: {risk['vulnerability']}.",
        "statement": f"Raised by the gap findings {', '.join(risk['findings'])}; "
        f"treatment: {risk['treatment']}"
        + (f", residual risk accepted by {accepted}." if accepted else "."),
        "props": [
            {"name": "risk-register-id", "ns": NS, "value": risk_id},
            {"name": "risk-register-version", "ns": NS, "value": str(risk["version"])},
            {"name": "risk-owner", "ns": NS, "value": str(risk["owner"])},
            *(
                [{"name": "residual-risk-accepted-by", "ns": NS, "value": str(accepted)}]
                if accepted
                else []
            ),
            *({"name": "finding", "ns": NS, "value": str(finding)} for finding in risk["findings"]),
        ],
        # Open while it is held: an accepted residual risk is still a risk the
        # organisation carries (its acceptance is a prop, not a closure).
        "status": "open",
        "characterizations": [
            {
                "props": [{"name": "method", "ns": NS, "value": RISK_METHOD}],
                "origin": {
                    "actors": [
                        {"type": "party", "actor-uuid": party_uuid(p)}
                        for p in dict.fromkeys(deciders or [str(risk["owner"])])
                    ]
                },
                "facets": [
                    {"name": "likelihood", "system": NS, "value": str(risk["likelihood"])},
                    {"name": "impact", "system": NS, "value": str(risk["impact"])},
                    {"name": "risk", "system": NS, "value": str(risk["level"])},
                    # FedRAMP's three-level scale, read off the register's 1-5.
                    fedramp_facet("likelihood", risk["likelihood"]),
                    fedramp_facet("impact", risk["impact"]),
                ],
            }
        ],
        "remediations": [
            {
                "uuid": stable_uuid(uuid, "treatment"),
                "lifecycle": "planned",
                "title": f"Treatment: {risk['treatment']}",
                "description": str(risk.get("treatment_plan") or risk["treatment"]),
                "props": [
                    {"name": "scf-control", "ns": NS, "value": str(c)} for c in risk["controls"]
                ]
                or None,
                "origins": actors([str(risk["owner"])]),
            },
            {  # FedRAMP asks for a recommendation besides the plan.
                "uuid": stable_uuid(uuid, "recommendation"),
                "lifecycle": "recommendation",
                "title": "Recommendation",
                "description": str(risk.get("treatment_plan") or risk["treatment"]),
            },
        ],
    }


def fedramp_facet(name: str, rating: Any) -> dict[str, Any]:
    """1-2 low, 3 moderate, 4-5 high: FedRAMP's values for a 1-5 rating."""
    value = int(rating)
    level = "low" if value <= 2 else "moderate" if value == 3 else "high"
    return {"name": name, "system": FEDRAMP_SYSTEM, "value": level}


def register_risks_by_finding(
    built: list[dict[str, Any]], risks: list[dict[str, Any]]
) -> dict[str, list[str]]:
    """Finding label -> the uuids of the register risks linked to it."""
    found: dict[str, list[str]] = {}
    for oscal, risk in zip(built, risks, strict=True):
        for finding in risk["findings"]:
            found.setdefault(str(finding), []).append(oscal["uuid"])
    return found
