"""The assessment plan's activities and tasks: for each requirement in scope (an applicable
row of the approved SoA) one activity saying what is examined, and one task that performs
it on the plan's subjects (every uploaded document is examined against every applicable
requirement).

An activity's steps are its SCF controls, each in the catalogue's own words, quoted
verbatim: the control question it answers, the practices its methods to comply name
(never a vendor product) and the artifacts its Evidence Request List names. The method is
EXAMINE alone: interviews and technical tests are excluded activities of a document
review. Its related controls are the requirement's NIST SP 800-53 rev5 ids through the
crosswalk; its responsible roles, the people who approved the evidence and gap analyses
in the roles they approved in.
"""

from __future__ import annotations

from typing import Any

from workers.analysis.nist_crosswalk import oscal_control_id
from workers.reporting.nist_objectives import requirement_nist_ids
from workers.reporting.oscal_parts import responsible, stable_uuid
from workers.reporting.oscal_people import approvers
from workers.reporting.render import ReportInput
from workers.soa_content import soa_rows


def activities_and_tasks(
    report: ReportInput, base: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(activities, tasks), one of each per requirement in scope, in the SoA's order."""
    nist = requirement_nist_ids(report.gaps)
    roles = responsible(approvers(report, "evidence_analysis", "gap_analysis"))
    activities: list[dict[str, Any]] = []
    tasks: list[dict[str, Any]] = []
    for row in soa_rows(report.soa):
        if row.get("applicable") is False:
            continue
        label = f"{row.get('framework')} {row.get('requirement_id')}"
        activity = _activity(report, base, label, row, nist.get(label, []), roles)
        activities.append(activity)
        tasks.append(
            {
                "uuid": stable_uuid(base, "task", label),
                "type": "action",
                "title": f"Assess {label}",
                "description": f"Examine the uploaded documents for {label}"
                + (f" ({row['title']})" if row.get("title") else "")
                + "; the system proposes what they show and a person decides its status.",
                "associated-activities": [
                    {
                        "activity-uuid": activity["uuid"],
                        "subjects": [{"type": "component", "include-all": {}}],
                    }
                ],
                "responsible-roles": roles,
            }
        )
    return activities, tasks


def _activity(
    report: ReportInput,
    base: str,
    label: str,
    row: dict[str, Any],
    nist: list[str],
    roles: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    excluded = set(row.get("excluded_controls") or [])
    controls = [str(c) for c in row.get("scf_controls") or [] if c not in excluded]
    steps = [
        _step(base, label, control_id, report.controls[control_id])
        for control_id in controls
        if control_id in report.controls
    ]
    where = f" through SCF {', '.join(controls)}" if controls else ""
    return {
        "uuid": stable_uuid(base, "activity", label),
        "title": f"Examine the documents for {label}",
        "description": f"Examine the uploaded documents for evidence of {label}{where}"
        + (
            "."
            if steps
            else ": no SCF control links to it, so a person decides its status from "
            "their own knowledge."
        ),
        "props": [{"name": "method", "value": "EXAMINE"}],
        "steps": steps or None,
        "related-controls": {
            "control-selections": [
                {"include-controls": [{"control-id": oscal_control_id(i)} for i in nist]}
            ]
        }
        if nist
        else None,
        "responsible-roles": roles,
    }


def _step(base: str, label: str, control_id: str, text: dict[str, Any]) -> dict[str, Any]:
    """One SCF control's examination, in the catalogue's words (quoted, verbatim)."""
    parts = [f"SCF control question: “{text['question']}”" if text.get("question") else ""]
    practices = text.get("practices") or []
    if practices:
        listed = "; ".join(f"“{p}”" for p in practices)
        parts.append(f"Practices the SCF's methods to comply name: {listed}")
    artifacts = text.get("evidence_artifacts") or []
    if artifacts:
        listed = "; ".join(f"“{a}”" for a in artifacts)
        parts.append(f"Evidence to examine (SCF Evidence Request List): {listed}")
    return {
        "uuid": stable_uuid(base, "step", label, control_id),
        "title": f"{control_id} {text.get('name') or ''}".strip(),
        "description": "\n\n".join(p for p in parts if p)
        or f"Examine the documents for {control_id}.",
    }
