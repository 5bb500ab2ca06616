"""OSCAL exports of an approved run: assessment-results and plan-of-action-and-milestones.

Built as OSCAL JSON and validated by compliance-trestle's OSCAL models before they are
written, so a file that leaves here is one trestle (and FedRAMP tooling) can read.
Requirement findings carry the proposal and the reviewers' decisions as properties in the
product's namespace; POA&M items carry FedRAMP's POAM-ID.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from workers.reporting.render import ReportInput

NS = "https://lifecycle.example/ns/oscal"
FEDRAMP_NS = "https://fedramp.gov/ns/oscal"
_UUID_NAMESPACE = uuid.UUID("c5a0d0a8-4c3e-4e4b-9a7f-0b9d1c1f0a11")
_TOKEN_START = re.compile(r"^[_A-Za-z]")


def _uuid(*parts: str) -> str:
    """Stable ids: the same report gives the same document."""
    return str(uuid.uuid5(_UUID_NAMESPACE, "\n".join(parts)))


def _token(value: str) -> str:
    token = re.sub(r"[^A-Za-z0-9_.-]", "_", value)
    return token if _TOKEN_START.match(token) else f"req-{token}"


def _metadata(report: ReportInput, title: str, moment: str) -> dict[str, Any]:
    from trestle.oscal import OSCAL_VERSION

    return {
        "title": title,
        "last-modified": moment,
        "version": "1.0",
        "oscal-version": OSCAL_VERSION,
        "remarks": str(report.scope.get("attribution") or "")[:2000] or None,
    }


def _clean(value: Any) -> Any:
    """Empty values dropped; titles on one line, as OSCAL's markup-line requires."""
    if isinstance(value, dict):
        return {
            k: (" ".join(v.split()) if k == "title" and isinstance(v, str) else _clean(v))
            for k, v in value.items()
            if v not in (None, "", [])
        }
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def assessment_results(report: ReportInput, moment: str) -> dict[str, Any]:
    """`moment`: the report's as-of time, ISO 8601 with its offset."""
    from trestle.oscal.assessment_results import AssessmentResults

    base = _uuid(report.title, report.as_of, "assessment-results")
    gaps = {str(g.get("control_id")): g for g in report.gaps.get("gaps", [])}
    observations: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    controls: set[str] = set()
    for row in report.evidence.get("requirements", []):
        if row.get("applicable") is False:
            continue  # not applicable in the approved SoA: nothing was assessed
        label = f"{row.get('framework')} {row.get('requirement_id')}"
        controls.update(str(c) for c in row.get("scf_controls", []))
        observation = _uuid(base, "observation", label)
        evidence = row.get("evidence") or []
        observations.append(
            {
                "uuid": observation,
                "title": f"Evidence for {label}",
                "description": str(row.get("reason") or "no reason recorded"),
                "methods": ["EXAMINE"],
                "types": ["finding"],
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
        )
        gap = gaps.get(label)
        findings.append(
            {
                "uuid": _uuid(base, "finding", label),
                "title": label,
                "description": str(gap.get("finding") if gap else row.get("reason")),
                "props": [
                    {"name": "proposal", "ns": NS, "value": str(row.get("proposal"))},
                    *(
                        [{"name": "severity", "ns": NS, "value": str(gap["severity"])}]
                        if gap
                        else []
                    ),
                ],
                "target": {
                    "type": "objective-id",
                    "target-id": _token(str(row.get("requirement_id"))),
                    "status": {"state": "not-satisfied" if gap else "satisfied"},
                },
                "related-observations": [{"observation-uuid": observation}],
            }
        )
    document = {
        "uuid": base,
        "metadata": _metadata(report, f"Assessment results: {report.assessment_name}", moment),
        "import-ap": {"href": "#assessment-plan"},
        "results": [
            {
                "uuid": _uuid(base, "result"),
                "title": report.title,
                "description": "Evidence analysis of the uploaded documents against the "
                "selected frameworks through the SCF crosswalk, as approved.",
                "start": moment,
                "reviewed-controls": {"control-selections": _selections(controls)},
                "observations": observations or None,
                "findings": findings or None,
            }
        ],
    }
    model = AssessmentResults.model_validate(_clean(document))
    return {"assessment-results": model.model_dump(mode="json", by_alias=True, exclude_none=True)}


def _selections(controls: set[str]) -> list[dict[str, Any]]:
    if not controls:
        return [{"include-all": {}}]
    return [{"include-controls": [{"control-id": _token(c.lower())} for c in sorted(controls)]}]


def plan_of_action(report: ReportInput, moment: str) -> dict[str, Any]:
    from trestle.oscal.poam import PlanOfActionAndMilestones

    base = _uuid(report.title, report.as_of, "poam")
    risks: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
    for item in report.poam.get("items", []):
        risk = _uuid(base, "risk", str(item.get("id")))
        milestones = [
            {
                "uuid": _uuid(risk, "milestone", m["date"], m["title"]),
                "type": "milestone",
                "title": m["title"],
                "timing": {"on-date": {"date": f"{m['date']}T00:00:00Z"}},
            }
            for m in item.get("milestones", [])
        ]
        risks.append(
            {
                "uuid": risk,
                "title": str(item.get("weakness_name")),
                "description": str(item.get("weakness") or item.get("weakness_name")),
                "statement": str(item.get("remediation")),
                "status": "open",
                "props": [
                    {
                        "name": "impacted-control-id",
                        "ns": FEDRAMP_NS,
                        "value": _token(c.strip().lower()),
                    }
                    for c in str(item.get("controls") or "").split(",")
                    if c.strip()
                ]
                or None,
                "deadline": f"{item.get('scheduled_completion_date')}T00:00:00Z",
                "remediations": [
                    {
                        "uuid": _uuid(risk, "remediation"),
                        "lifecycle": "planned",
                        "title": "Remediation plan",
                        "description": str(item.get("remediation")),
                        "tasks": milestones or None,
                    }
                ],
            }
        )
        items.append(
            {
                "uuid": _uuid(base, "item", str(item.get("id"))),
                "title": str(item.get("weakness_name")),
                "description": str(item.get("weakness") or item.get("weakness_name")),
                "props": [{"name": "POAM-ID", "ns": FEDRAMP_NS, "value": str(item.get("id"))}],
                "related-risks": [{"risk-uuid": risk}],
                "remarks": str(item.get("comments") or "") or None,
            }
        )
    document = {
        "uuid": base,
        "metadata": _metadata(report, f"POA&M: {report.assessment_name}", moment),
        "risks": risks or None,
        "poam-items": items
        or [
            {
                "uuid": _uuid(base, "none"),
                "title": "No open items",
                "description": "The approved gap analysis has no gaps.",
            }
        ],
    }
    model = PlanOfActionAndMilestones.model_validate(_clean(document))
    return {
        "plan-of-action-and-milestones": model.model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
    }


def render_oscal_assessment_results(report: ReportInput, moment: str) -> bytes:
    return json.dumps(assessment_results(report, moment), indent=2, sort_keys=True).encode()


def render_oscal_poam(report: ReportInput, moment: str) -> bytes:
    return json.dumps(plan_of_action(report, moment), indent=2, sort_keys=True).encode()
