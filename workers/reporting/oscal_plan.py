"""The OSCAL assessment plan of an approved run: what was assessed (the scope: its
frameworks and requirements, exclusions), how (the methodology, assumption and activities
included and excluded that FedRAMP's plan asks for, and an activity and task per
requirement in scope: oscal_activities.py), against which controls (NIST SP 800-53 rev5
ids through the SCF crosswalk, in NIST's catalogue), the subjects examined (the uploaded
documents), by whom (the assessment's people and their roles: oscal_people.py, and the
roster's people in FedRAMP's roles: oscal_fedramp_people.py), and the
approvals' seals (oscal_seals.py). The assessment results import it."""

from __future__ import annotations

from typing import Any

from workers.reporting.nist_objectives import examined_objectives
from workers.reporting.oscal_activities import activities_and_tasks
from workers.reporting.oscal_fedramp_people import with_fedramp_people
from workers.reporting.oscal_parts import (
    FEDRAMP_NS,
    NS,
    catalogue_resources,
    clean,
    metadata,
    reviewed_controls,
    ssp_href,
    stable_uuid,
)
from workers.reporting.oscal_seals import seal_resources
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
    activities, tasks = activities_and_tasks(report, base)
    objectives = examined_objectives(report.objectives, activities)
    document = {
        "uuid": base,
        "metadata": with_fedramp_people(
            report, metadata(report, f"Assessment plan: {report.assessment_name}", moment)
        ),
        "import-ssp": ssp_href(report),
        "local-definitions": {
            "components": components or None,
            "objectives-and-methods": objectives or None,
            "activities": activities or None,
            "remarks": None if objectives else NO_OBJECTIVES,
        },
        "terms-and-conditions": {"parts": [_scope_part(report), *_method_parts()]},
        "reviewed-controls": reviewed_controls(report),
        "assessment-subjects": [subjects],
        "tasks": tasks or None,
        "back-matter": {"resources": [*catalogue_resources(report), *seal_resources(report)]},
    }
    model = AssessmentPlan.model_validate(clean(document))
    return {"assessment-plan": model.model_dump(mode="json", by_alias=True, exclude_none=True)}


NO_OBJECTIVES = (
    "No NIST SP 800-53A objectives are listed: the run pinned no NIST SP 800-53 rev5 "
    "catalogue carrying them (NIST's OSCAL release 5.1 or later; `lifecycle catalog import "
    "<file>` adds one for the runs that start after it)."
)

#: FedRAMP's plan parts of one statement each: (part, title, its item, the statement).
_TERMS = [
    (
        "assumptions",
        "Assumptions",
        "assumption",
        "The uploaded documents are the organisation's current versions; what they describe "
        "is documented practice, not proof that it operates.",
    ),
    (
        "included-activities",
        "Included activities",
        "included-activity",
        "Examination of the uploaded policies, procedures and plans.",
    ),
    (
        "excluded-activities",
        "Excluded activities",
        "excluded-activity",
        "Technical testing of systems (scans, penetration tests), interviews and observation "
        "of operations.",
    ),
]


def _method_parts() -> list[dict[str, Any]]:
    """How every assessment here is done, as FedRAMP's plan rules ask it be stated: the
    methodology (with FedRAMP's sampling statement), the assumption, and the activities
    included and excluded (its rules of engagement)."""
    methodology = {
        "name": "methodology",
        "title": "Methodology",
        "props": [{"name": "sampling", "ns": FEDRAMP_NS, "value": "no"}],
        "prose": "Each uploaded document is examined against every applicable requirement "
        "through the SCF crosswalk; the system proposes what the documents show and a person "
        "decides each requirement's status.\n\nThe assessor will not use sampling when "
        "performing this assessment.",
    }
    return [
        methodology,
        *(
            {"name": name, "title": title, "parts": [{"name": item, "prose": prose}]}
            for name, title, item, prose in _TERMS
        ),
    ]


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
