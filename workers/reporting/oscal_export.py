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

from workers.analysis.dismissals import open_gaps
from workers.reporting.oscal_parts import (
    AP_MEDIA_TYPE,
    FEDRAMP_NS,
    NS,
    actors,
    catalogue_resources,
    clean,
    fedramp_as_written,
    metadata,
    party_uuid,
    reviewed_controls,
    stable_uuid,
    token,
)
from workers.reporting.oscal_people import OWNER, approvers, named, owners
from workers.reporting.oscal_plan import assessment_plan, document_uuid
from workers.reporting.oscal_poam import plan_of_action
from workers.reporting.oscal_register_risks import register_risk, register_risks_by_finding
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
    of_finding = register_risks_by_finding(risks, report.risks)
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
    fedramp_as_written(dumped)
    return {"assessment-results": dumped}


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
