"""OSCAL assessment results of an approved run, importing its assessment plan.

Every assessed requirement is an observation: what its documents show, with the cited
passages and the system's proposal as a property. A finding, with its target's status
(`satisfied` or `not-satisfied`) and FedRAMP's implementation status, exists only where a
person set the requirement's status (the SoA's implementation status or the gap finding's
assessed status), and names that person as its origin: a proposal is never a conclusion. A
not-satisfied finding names its risk (the gap's weakness and recommendation, whose origin
is who answers for the remediation). Each observation names who confirmed the evidence
analysis. Reviewed controls are NIST SP 800-53 rev5 ids (the SCF crosswalk), which resolve
in NIST's catalogue; the back-matter carries the approvals' seals (oscal_seals.py).

Built as OSCAL JSON and validated by compliance-trestle's OSCAL models before it is
written; the assessment plan and POA&M are in oscal_plan.py and oscal_poam.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from orchestrator.contracts.fedramp_settings import FEDRAMP_SYSTEM
from orchestrator.contracts.risk_method import METHOD_NAME as RISK_METHOD
from workers.analysis.dismissals import open_gaps
from workers.reporting.oscal_parts import (
    AP_MEDIA_TYPE,
    FEDRAMP_NS,
    NS,
    actors,
    catalogue_resources,
    clean,
    metadata,
    party_uuid,
    reviewed_controls,
    stable_uuid,
    token,
)
from workers.reporting.oscal_people import OWNER, approvers, named, owners
from workers.reporting.oscal_plan import assessment_plan, document_uuid
from workers.reporting.oscal_poam import plan_of_action
from workers.reporting.oscal_seals import seal_resources
from workers.reporting.render import ReportInput
from workers.reporting.reviewer_status import person_set_statuses

#: A person's status -> the finding's objective state (not applicable: no finding).
STATE = {
    "implemented": "satisfied",
    "partially_implemented": "not-satisfied",
    "not_implemented": "not-satisfied",
}
#: A person's status -> FedRAMP's implementation status, which has no "not implemented":
#: a control not yet in place is "planned" (its POA&M item plans it).
IMPLEMENTATION = {
    "implemented": "implemented",
    "partially_implemented": "partial",
    "not_implemented": "planned",
}


@dataclass(frozen=True)
class PlanLink:
    """Where the assessment plan export is, relative to the results file, and its hash."""

    href: str
    sha256: str


def assessment_results(report: ReportInput, moment: str, plan: PlanLink) -> dict[str, Any]:
    """`moment`: the report's as-of time, ISO 8601 with its offset."""
    from trestle.oscal.assessment_results import AssessmentResults

    base = stable_uuid(report.title, report.as_of, "assessment-results")
    gaps = {str(g.get("control_id")): g for g in open_gaps(report.gaps)}
    decided = person_set_statuses(report)
    documents = {str(d.get("filename")): document_uuid(report, d) for d in report.documents}
    # Who confirmed the evidence analysis answers for its observations; a gap's owner (or,
    # until one is set, who approved the gap analysis) for the remediation of its risk.
    confirmed = named(approvers(report, "evidence_analysis", "gap_analysis"))
    owned = owners(report)
    accepted = approvers(report, "gap_analysis")
    observations: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    risks: list[dict[str, Any]] = [register_risk(base, r) for r in report.risks]
    of_finding = _register_risks_by_finding(risks, report.risks)
    for row in report.evidence.get("requirements", []):
        if row.get("applicable") is False:
            continue  # not applicable in the approved SoA: nothing was assessed
        label = f"{row.get('framework')} {row.get('requirement_id')}"
        observation = _observation(base, label, row, gaps.get(label), documents, moment)
        observation["origins"] = actors(confirmed)
        observations.append(observation)
        status = decided.get(label)
        if status is None or status.status not in STATE:
            continue
        risk = None
        if STATE[status.status] == "not-satisfied":  # FedRAMP: it names the risk it leaves
            answers = {OWNER: [owned[label]]} if label in owned else accepted
            risk = _risk(base, label, gaps.get(label), answers)
            risks.append(risk)
        findings.append(
            {
                "uuid": stable_uuid(base, "finding", label),
                "title": label,
                "description": str(
                    gaps[label].get("finding")
                    if label in gaps
                    else f"Assessed {status.status.replace('_', ' ')} by {status.by}."
                ),
                "props": [
                    {"name": "assessed-status", "ns": NS, "value": status.status},
                    *(
                        [{"name": "severity", "ns": NS, "value": str(gaps[label]["severity"])}]
                        if label in gaps
                        else []
                    ),
                ],
                "origins": [{"actors": [{"type": "party", "actor-uuid": party_uuid(status.by)}]}]
                if status.by
                else None,
                "target": {
                    "type": "objective-id",
                    "target-id": token(str(row.get("requirement_id"))),
                    "props": [
                        {
                            "name": "implementation-status",
                            "ns": FEDRAMP_NS,
                            "value": IMPLEMENTATION[status.status],
                        }
                    ],
                    "status": {"state": STATE[status.status]},
                },
                "related-observations": [{"observation-uuid": observation["uuid"]}],
                "related-risks": [
                    {"risk-uuid": uuid}
                    for uuid in ([risk["uuid"]] if risk else []) + of_finding.get(label, [])
                ]
                or None,
            }
        )
    plan_resource = stable_uuid(base, "assessment-plan")
    document = {
        "uuid": base,
        "metadata": metadata(report, f"Assessment results: {report.assessment_name}", moment),
        "import-ap": {"href": f"#{plan_resource}"},
        "results": [
            {
                "uuid": stable_uuid(base, "result"),
                "title": report.title,
                "description": "Evidence analysis of the uploaded documents against the "
                "selected frameworks through the SCF crosswalk, as approved. Findings are "
                "the requirements whose status a person set; the others are observations."
                + _conclusion(report),
                **_period(report, moment),
                "reviewed-controls": reviewed_controls(report),
                "observations": observations or None,
                "risks": risks or None,
                "findings": findings or None,
            }
        ],
        "back-matter": {
            "resources": [
                {
                    "uuid": plan_resource,
                    "title": f"Assessment plan: {report.assessment_name}",
                    "props": [
                        {"name": "type", "ns": FEDRAMP_NS, "value": "security-assessment-plan"}
                    ],
                    "rlinks": [
                        {
                            "href": plan.href,
                            "media-type": AP_MEDIA_TYPE,
                            "hashes": [{"algorithm": "SHA-256", "value": plan.sha256}],
                        }
                    ],
                },
                *catalogue_resources(report),
                *seal_resources(report),
            ]
        },
    }
    model = AssessmentResults.model_validate(clean(document))
    dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    _fedramp_system_as_written(dumped)
    return {"assessment-results": dumped}


def _fedramp_system_as_written(results: dict[str, Any]) -> None:
    """The model reads a facet's system as a URL and writes it back with a trailing
    slash; FedRAMP's rules compare the system as a string, `https://fedramp.gov`."""
    for result in results.get("results", []):
        for risk in result.get("risks", []):
            for characterization in risk.get("characterizations", []):
                for facet in characterization.get("facets", []):
                    if str(facet.get("system")).rstrip("/") == FEDRAMP_SYSTEM:
                        facet["system"] = FEDRAMP_SYSTEM


def _observation(
    base: str,
    label: str,
    row: dict[str, Any],
    gap: dict[str, Any] | None,
    documents: dict[str, str],
    moment: str,
) -> dict[str, Any]:
    evidence = row.get("evidence") or []
    cited = sorted({str(e.get("document")) for e in evidence})
    return {
        "uuid": stable_uuid(base, "observation", label),
        "title": f"Evidence for {label}",
        "description": str(gap.get("condition") if gap else _in_words(row, cited)),
        "props": [{"name": "proposal", "ns": NS, "value": str(row.get("proposal"))}],
        "methods": ["EXAMINE"],
        "types": ["control-objective"],
        "subjects": [
            {"subject-uuid": documents[name], "type": "component"}
            for name in cited
            if name in documents
        ]
        or None,
        "collected": moment,
        "relevant-evidence": [
            {
                "description": f"{e.get('document')} § {e.get('heading_path') or '-'}: "
                f"{e.get('excerpt')}"
            }
            for e in evidence
        ]
        or None,
    }


def _risk(
    base: str, label: str, gap: dict[str, Any] | None, answers: dict[str, list[str]]
) -> dict[str, Any]:
    """The weakness a not-satisfied finding leaves, and what the gap analysis recommends
    (its origin: who answers for the remediation); the POA&M rates and schedules it."""
    gap = gap or {}
    recommendation = str(gap.get("recommendation") or "To be planned")
    return {
        "uuid": stable_uuid(base, "risk", label),
        "title": f"{label}: {gap.get('title') or 'not satisfied'}",
        "description": str(gap.get("finding") or gap.get("condition") or f"{label} is not met."),
        "statement": str(gap.get("effect") or gap.get("condition") or f"{label} is not met."),
        "status": "open",
        "remediations": [
            {
                "uuid": stable_uuid(base, "risk", label, "recommendation"),
                "lifecycle": "recommendation",
                "title": "Recommendation",
                "description": recommendation,
                "origins": actors(named(answers)),
            }
        ],
    }


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
                    _fedramp_facet("likelihood", risk["likelihood"]),
                    _fedramp_facet("impact", risk["impact"]),
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


def _fedramp_facet(name: str, rating: Any) -> dict[str, Any]:
    """1-2 low, 3 moderate, 4-5 high: FedRAMP's values for a 1-5 rating."""
    value = int(rating)
    level = "low" if value <= 2 else "moderate" if value == 3 else "high"
    return {"name": name, "system": FEDRAMP_SYSTEM, "value": level}


def _register_risks_by_finding(
    built: list[dict[str, Any]], risks: list[dict[str, Any]]
) -> dict[str, list[str]]:
    """Finding label -> the uuids of the register risks linked to it."""
    found: dict[str, list[str]] = {}
    for oscal, risk in zip(built, risks, strict=True):
        for finding in risk["findings"]:
            found.setdefault(str(finding), []).append(oscal["uuid"])
    return found


def _in_words(row: dict[str, Any], cited: list[str]) -> str:
    proposal = str(row.get("proposal") or "no proposal").replace("_", " ")
    where = f" in {', '.join(cited)}" if cited else ""
    return f"Proposed: {proposal}{where}; not assessed by a person."


def _conclusion(report: ReportInput) -> str:
    """The assessor's conclusion and scope boundary, as a reviewer wrote them on the report."""
    said = report.statement
    parts = [
        f" Assessor's conclusion: {said['conclusion']}" if said.get("conclusion") else "",
        f" Scope boundary: {said['scope_boundary']}" if said.get("scope_boundary") else "",
    ]
    return "".join(parts)


def _period(report: ReportInput, moment: str) -> dict[str, str]:
    """The period assessed, where a reviewer set it; otherwise the results start now."""
    start, end = report.statement.get("period_start"), report.statement.get("period_end")
    period = {"start": f"{start}T00:00:00Z" if start else moment}
    if end:
        period["end"] = f"{end}T23:59:59Z"
    return period


def render_oscal_assessment_plan(report: ReportInput, moment: str) -> bytes:
    return json.dumps(assessment_plan(report, moment), indent=2, sort_keys=True).encode()


def render_oscal_assessment_results(report: ReportInput, moment: str, plan: PlanLink) -> bytes:
    return json.dumps(assessment_results(report, moment, plan), indent=2, sort_keys=True).encode()


def render_oscal_poam(report: ReportInput, moment: str) -> bytes:
    return json.dumps(plan_of_action(report, moment), indent=2, sort_keys=True).encode()
