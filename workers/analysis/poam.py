"""POA&M: one item per gap, with the fields of the FedRAMP POA&M (weakness, source, point of
contact, resources, detection and completion dates, milestones, status, risk, deviations).

Dates follow FedRAMP's remediation windows from the original detection date (high 30
days, moderate 90, low 180). The point of contact is the owner a reviewer set on the
requirement; until then the item says it is unassigned and which role is proposed.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext
from workers.inputs import latest_artifact, require_artifact, source

#: Gap severity -> (risk rating, priority, days to complete).
WINDOWS = {"high": ("High", "P1", 30), "medium": ("Moderate", "P2", 90), "low": ("Low", "P3", 180)}
OWNER_ROLES = {
    "AST": "IT Asset Manager",
    "BCD": "Business Continuity Manager",
    "CFG": "Infrastructure Lead",
    "CHG": "Change Manager",
    "CPL": "Compliance Officer",
    "CRY": "Security Architect",
    "DCH": "Data Protection Officer",
    "END": "Endpoint Lead",
    "GOV": "CISO",
    "HRS": "HR Director",
    "IAC": "Identity & Access Manager",
    "IRO": "Incident Response Lead",
    "MON": "SOC Manager",
    "NET": "Network Security Lead",
    "OPS": "IT Operations Manager",
    "PES": "Facilities Manager",
    "PRI": "Data Protection Officer",
    "RSK": "Risk Manager",
    "SAT": "Security Awareness Lead",
    "SEA": "Security Architect",
    "TPM": "Vendor Risk Manager",
    "VPM": "Vulnerability Management Lead",
}
DEFAULT_OWNER = "CISO"
DETECTOR = "Assessment evidence analysis (documents against the SCF crosswalk)"


def create_poam(context: JobContext) -> dict[str, Any]:
    gap_analysis = require_artifact(context, ArtifactKind.GAP_ANALYSIS)
    evidence = latest_artifact(
        context.session, context.request.run_id, ArtifactKind.EVIDENCE_ANALYSIS
    )
    rows = {
        f"{r.get('framework')} {r.get('requirement_id')}": r
        for r in (evidence.content.get("requirements", []) if evidence else [])
    }
    detected = utcnow().date()
    items = [
        _item(number, gap, rows.get(str(gap.get("control_id")), {}), detected)
        for number, gap in enumerate(gap_analysis.content.get("gaps", []), start=1)
    ]
    by_priority = {
        priority: sum(1 for item in items if item["priority"] == priority)
        for _, priority, _ in WINDOWS.values()
    }
    content = {
        "sources": [source(a) for a in (gap_analysis, evidence) if a is not None],
        "catalog": gap_analysis.content.get("catalog"),
        "created_on": detected.isoformat(),
        "items": items,
        "summary": {
            "items": len(items),
            **by_priority,
            "unassigned": sum(1 for i in items if not i["owner_assigned"]),
        },
    }
    return content


def _item(number: int, gap: dict[str, Any], row: dict[str, Any], detected: date) -> dict[str, Any]:
    risk, priority, days = WINDOWS.get(str(gap.get("severity")), WINDOWS["high"])
    controls = list(gap.get("scf_controls") or [])
    domain = controls[0].split("-")[0] if controls else ""
    owner = str(row.get("owner") or "").strip()
    point_of_contact = owner or (f"Unassigned (proposed: {OWNER_ROLES.get(domain, DEFAULT_OWNER)})")
    scheduled = _date(row.get("target_date")) or detected + timedelta(days=days)
    milestones = _milestones(detected, scheduled)
    name = f"{gap.get('control_id')}: {gap.get('title')}"
    weakness = f"{gap.get('condition')}"
    remediation = (
        "Adopt and document the practice the criteria describe, operate it, and "
        f"upload the records that show it. Criteria: {gap.get('criteria')}"
    )
    return {
        "id": f"POAM-{number:03d}",
        "control_id": gap.get("control_id"),
        "controls": ", ".join(controls),
        "weakness_name": name[:250],
        "weakness": weakness,
        "weakness_detector_source": DETECTOR,
        "weakness_source_identifier": str(gap.get("requirement_id") or ""),
        "asset_identifier": "Organisation-wide (policy and process)",
        "point_of_contact": point_of_contact,
        "owner_role": point_of_contact,
        "owner_assigned": bool(owner),
        "resources_required": "To be estimated by the point of contact",
        "remediation": remediation,
        "original_detection_date": detected.isoformat(),
        "scheduled_completion_date": scheduled.isoformat(),
        "milestone_date": scheduled.isoformat(),
        "milestones": milestones,
        "planned_milestones": "; ".join(f"{m['date']}: {m['title']}" for m in milestones),
        "milestone_changes": "",
        "status": "Open",
        "status_date": detected.isoformat(),
        "vendor_dependency": "No",
        "last_vendor_check_in_date": "",
        "vendor_dependent_product_name": "",
        "original_risk_rating": risk,
        "adjusted_risk_rating": risk,
        "risk_adjustment": "No",
        "false_positive": "No",
        "operational_requirement": "No",
        "deviation_rationale": "",
        "supporting_documents": "; ".join(
            sorted({str(e.get("document")) for e in row.get("evidence", [])})
        ),
        "comments": str(row.get("note") or gap.get("condition") or ""),
        "auto_approve": "No",
        "severity": gap.get("severity"),
        "priority": priority,
    }


def _milestones(detected: date, scheduled: date) -> list[dict[str, str]]:
    """Three dated steps inside the window: document, operate with records, re-assess."""
    span = max((scheduled - detected).days, 3)
    steps = (
        ("Document and approve the policy or procedure that meets the criteria", 1 / 3),
        ("Operate the practice and keep records of it", 2 / 3),
        ("Upload the evidence and re-run the evidence analysis", 1.0),
    )
    return [
        {"title": title, "date": (detected + timedelta(days=round(span * share))).isoformat()}
        for title, share in steps
    ]


def _date(raw: Any) -> date | None:
    try:
        return date.fromisoformat(str(raw)) if raw else None
    except ValueError:
        return None
