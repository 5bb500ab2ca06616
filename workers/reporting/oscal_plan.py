"""The OSCAL assessment plan of an approved run: what was assessed (the scope: its
frameworks and requirements, exclusions), against which controls (NIST SP 800-53 rev5 ids
through the SCF crosswalk, in NIST's catalogue), and the subjects examined (the uploaded
documents). The assessment results import it."""

from __future__ import annotations

from typing import Any

from workers.reporting.oscal_parts import (
    NS,
    catalogue_resources,
    clean,
    metadata,
    reviewed_controls,
    ssp_href,
    stable_uuid,
)
from workers.reporting.render import ReportInput
from workers.soa_content import soa_rows


def plan_uuid(report: ReportInput) -> str:
    return stable_uuid(report.title, report.as_of, "assessment-plan")


def document_uuid(report: ReportInput, document: dict[str, Any]) -> str:
    return stable_uuid(plan_uuid(report), "document", str(document.get("sha256")))


def assessment_plan(report: ReportInput, moment: str) -> dict[str, Any]:
    from trestle.oscal.assessment_plan import AssessmentPlan

    base = plan_uuid(report)
    components = [
        {
            "uuid": document_uuid(report, d),
            "type": "policy",
            "title": str(d.get("filename")),
            "description": f"Uploaded to the assessment ({d.get('media_type')}) and examined "
            "for evidence of the requirements in scope.",
            "props": [{"name": "sha256", "ns": NS, "value": str(d.get("sha256"))}],
            "status": {"state": "operational"},
        }
        for d in report.documents
    ]
    subjects: dict[str, Any] = {
        "type": "component",
        "description": "The organisation's documents uploaded to the assessment.",
    }
    if components:
        subjects["include-subjects"] = [
            {"subject-uuid": c["uuid"], "type": "component"} for c in components
        ]
    else:
        subjects["include-all"] = {}
    document = {
        "uuid": base,
        "metadata": metadata(report, f"Assessment plan: {report.assessment_name}", moment),
        "import-ssp": ssp_href(report),
        "local-definitions": {"components": components or None},
        "terms-and-conditions": {"parts": [_scope_part(report)]},
        "reviewed-controls": reviewed_controls(report),
        "assessment-subjects": [subjects],
        "back-matter": {"resources": catalogue_resources(report)},
    }
    model = AssessmentPlan.model_validate(clean(document))
    return {"assessment-plan": model.model_dump(mode="json", by_alias=True, exclude_none=True)}


def _scope_part(report: ReportInput) -> dict[str, Any]:
    rows = soa_rows(report.soa)
    applicable = [r for r in rows if r.get("applicable") is not False]
    excluded = [r for r in rows if r.get("applicable") is False]
    framework = report.soa.get("framework") or report.scope.get("framework") or "SCF"
    prose = (
        f"Frameworks in scope: {framework}. {len(rows)} requirements in the approved "
        f"Statement of Applicability, {len(applicable)} applicable."
    )
    if excluded:
        prose += " Not applicable: " + "; ".join(
            f"{r.get('requirement_id')} ({r.get('justification') or 'no reason given'})"
            for r in excluded
        )
    return {"name": "assessment-inclusions", "title": "Scope", "prose": prose}
