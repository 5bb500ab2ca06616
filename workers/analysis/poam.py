"""POA&M: one item per gap, with the fields of FedRAMP's Rev5 POA&M template (weakness,
source, point of contact, resources, detection and completion dates, milestones, risk,
deviations, BOD 22-01, CVE, service) and the likelihood and impact its OSCAL form rates.

The point of contact, scheduled completion and severity are what the reviewer set on the
gap finding (or on this POA&M's previous draft); until an owner is set the point of contact
is the person the finding proposes, marked "(proposed)", or, with no roster, "Unassigned"
and the role proposed. Without a reviewer's date, the completion date is
the last day of FedRAMP's remediation window from the detection date (high 30 days,
moderate 90, low 180), the shorter of the windows of the risk rating and of the impact
(FedRAMP's OSCAL POA&M rules key the window on the impact and want the deadline inside
it), and the milestones are dated inside it by the finding's severity. "Controls" holds the
NIST SP 800-53 rev5 ids the finding's SCF controls map to (the SCF workbook's crosswalk);
the SCF ids stay in the comments.

An item of the previous POA&M whose finding is no longer a gap (or a reviewer marked it
"not a gap", workers.analysis.dismissals) is closed (FedRAMP's "Closed POA&M Items"); an
item keeps its POAM ID from draft to draft.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.owner_sources import fallback
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext
from workers.analysis import remediation_estimate
from workers.analysis.dismissals import open_gaps
from workers.analysis.drafting import drafts
from workers.analysis.owner_proposal import PERSON, PROPOSAL_FIELDS, ROLE
from workers.analysis.owner_roles import proposed_owner
from workers.analysis.reviewer_carry import carry
from workers.analysis.severity import LEVELS
from workers.inputs import latest_artifact, require_artifact, source

#: Gap severity -> (risk rating, priority, days to complete).
WINDOWS = {"high": ("High", "P1", 30), "medium": ("Moderate", "P2", 90), "low": ("Low", "P3", 180)}
DETECTOR = "Assessment evidence analysis (documents against the SCF crosswalk)"
SCF_CREDIT = "Secure Controls Framework (SCF), CC BY-ND 4.0"
_POAM_ID = re.compile(r"^POAM-(\d+)$")


@drafts("poam")
def create_poam(context: JobContext) -> dict[str, Any]:
    gap_analysis = require_artifact(context, ArtifactKind.GAP_ANALYSIS)
    run_id = context.request.run_id
    evidence = latest_artifact(context.session, run_id, ArtifactKind.EVIDENCE_ANALYSIS)
    previous = latest_artifact(context.session, run_id, ArtifactKind.POAM)
    rows = {
        f"{r.get('framework')} {r.get('requirement_id')}": r
        for r in (evidence.content.get("requirements", []) if evidence else [])
    }
    detected = utcnow().date()
    gaps = open_gaps(gap_analysis.content)  # a finding dismissed as not a gap has no item
    numbers = numbers_for(previous.content if previous else {}, gaps)
    items = [
        item_for(numbers[key], gap, rows.get(key, {}), detected)
        for gap in gaps
        if (key := str(gap.get("control_id")))
    ]
    carried = carry(previous, items, "items", "control_id", named_by="id")
    for item in items:
        if item.get("carried_from"):
            apply_reviewer_values(item, detected)
    closed = closed_items(
        previous.content if previous else {}, items, detected, gap_analysis.version
    )
    content = {
        "sources": [source(a) for a in (gap_analysis, evidence) if a is not None],
        "catalog": gap_analysis.content.get("catalog"),
        "crosswalk": gap_analysis.content.get("crosswalk"),
        "created_on": detected.isoformat(),
        "items": items,
        "closed_items": closed,
        "summary": summary(items, closed),
    }
    if carried is not None:
        content["carried_forward"] = carried
    return content


def summary(items: list[dict[str, Any]], closed: list[dict[str, Any]]) -> dict[str, Any]:
    by_priority = {
        priority: sum(1 for item in items if item["priority"] == priority)
        for _, priority, _ in WINDOWS.values()
    }
    return {
        "items": len(items),
        **by_priority,
        "unassigned": sum(1 for i in items if not i["owner_assigned"]),
        "closed": len(closed),
    }


def numbers_for(previous: dict[str, Any], gaps: list[dict[str, Any]]) -> dict[str, str]:
    """Each finding's POAM ID: the one it had on the previous POA&M, else the next free."""
    known = {
        str(item.get("control_id")): str(item.get("id"))
        for item in [*previous.get("items", []), *previous.get("closed_items", [])]
    }
    used = [int(m.group(1)) for i in known.values() if (m := _POAM_ID.match(i))]
    following = max(used, default=0)
    numbers: dict[str, str] = {}
    for gap in gaps:
        key = str(gap.get("control_id"))
        if key not in known:
            following += 1
            known[key] = f"POAM-{following:03d}"
        numbers[key] = known[key]
    return numbers


def item_for(
    poam_id: str, gap: dict[str, Any], row: dict[str, Any], detected: date
) -> dict[str, Any]:
    severity = str(gap.get("severity")) if gap.get("severity") in LEVELS else "high"
    risk, priority, days = WINDOWS[severity]
    scf = list(gap.get("scf_controls") or [])
    owner = str(gap.get("owner") or row.get("owner") or "").strip()
    proposal = proposed_for(gap)
    basis = gap.get("severity_basis") or {}
    impact = str(basis.get("impact") or _RATING[severity])
    target = parse_date(gap.get("target_date") or row.get("target_date"))
    scheduled = target or detected + timedelta(days=_last_day(days, impact))
    steps = [str(s) for s in gap.get("recommendation_steps") or []]
    milestones = _milestones(severity, steps, str(gap.get("title") or ""), detected, scheduled)
    nist = list(gap.get("nist_controls") or [])
    nist_basis = str(gap.get("nist_basis") or "") or (
        "" if nist else "no NIST SP 800-53 rev5 control maps to them in the SCF crosswalk"
    )
    resources = remediation_estimate.estimate(gap)
    comments = [
        f"{gap.get('framework')} {gap.get('requirement_id')}; SCF controls: "
        f"{', '.join(scf) or 'none'} ({SCF_CREDIT})",
        f"NIST SP 800-53 rev5 ids: {nist_basis}" if nist_basis else "",
        *([str(note)] if (note := gap.get("note") or row.get("note")) else []),
    ]
    return {
        "id": poam_id,
        "control_id": gap.get("control_id"),
        "controls": ", ".join(nist),
        "nist_controls": nist,
        "nist_basis": nist_basis,
        "scf_controls": scf,
        "weakness_name": f"{gap.get('control_id')}: {gap.get('title')}"[:250],
        "weakness": str(gap.get("condition") or ""),
        "weakness_detector_source": DETECTOR,
        "weakness_source_identifier": str(gap.get("control_id") or ""),
        "asset_identifier": "Organisation-wide (policy and process)",
        **point_of_contact(owner, proposal),
        "owner": owner or None,
        **proposal,
        "target_date": target.isoformat() if target else None,
        "resources_required": remediation_estimate.stated(resources),
        "resources_estimate": resources,
        "resources_undecided": resources["person_days"] is None,
        "remediation": str(gap.get("recommendation") or ""),
        "original_detection_date": detected.isoformat(),
        "scheduled_completion_date": scheduled.isoformat(),
        "milestone_date": scheduled.isoformat(),
        "milestones": milestones,
        "planned_milestones": _planned(milestones),
        "milestone_changes": _changes(gap),
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
        "comments": ". ".join(c for c in comments if c),
        "auto_approve": "No",
        # Policy and process findings are not known exploited vulnerabilities, nor CVEs.
        "bod_22_01_tracking": "No",
        "bod_22_01_due_date": "",
        "cve": "",
        "service_name": "",
        "severity": severity,
        "priority": priority,
        "likelihood": basis.get("likelihood") or _RATING[severity],
        "impact": impact,
    }


_RATING = {"high": "high", "medium": "moderate", "low": "low"}


def proposed_for(gap: dict[str, Any]) -> dict[str, Any]:
    """The finding's owner proposal (a finding drafted before proposals named people
    proposes the role that usually runs its domain)."""
    if gap.get("proposed_owner_kind"):
        return {key: gap.get(key) for key in PROPOSAL_FIELDS}
    return {
        "proposed_owner": proposed_owner(list(gap.get("scf_controls") or [])),
        "proposed_owner_kind": ROLE,
        "proposed_owner_source": fallback("the finding names no person"),
        "proposed_owner_person": None,
    }


def point_of_contact(owner: str, proposal: dict[str, Any]) -> dict[str, Any]:
    """FedRAMP's "Point of Contact": the owner a person set, else the proposed person
    flagged as proposed, else unassigned with the role proposed."""
    if owner:
        contact, proposed = owner, False
    elif proposal.get("proposed_owner_kind") == PERSON:
        contact, proposed = f"{proposal['proposed_owner']} (proposed)", True
    else:
        contact = f"Unassigned (proposed role: {proposal.get('proposed_owner')})"
        proposed = True
    return {
        "point_of_contact": contact,
        "owner_role": contact,
        "owner_assigned": bool(owner),
        "point_of_contact_proposed": proposed,
    }


def _last_day(days: int, impact: str) -> int:
    """Days from detection to the window's last day: FedRAMP's check is deadline before
    detection + window, with the window of the impact when it is the shorter one."""
    by_impact = {rating: WINDOWS[level][2] for level, rating in _RATING.items()}
    return min(days, by_impact.get(impact, days)) - 1


def apply_reviewer_values(item: dict[str, Any], detected: date | None = None) -> None:
    """A reviewer's owner, date or severity on the previous POA&M draft: its point of
    contact, risk rating and milestones follow, as they do from the gap finding."""
    detected = detected or parse_date(item.get("original_detection_date")) or utcnow().date()
    if item.get("severity") in WINDOWS:
        risk, priority, _ = WINDOWS[str(item["severity"])]
        item.update(original_risk_rating=risk, adjusted_risk_rating=risk, priority=priority)
    owner = str(item.get("owner") or "").strip()
    if owner:
        item.update(point_of_contact(owner, {}))
    target = parse_date(item.get("target_date"))
    if target is not None:
        milestones = _milestones(
            str(item["severity"]),
            [m["title"] for m in item.get("milestones", []) if not m.get("interim")],
            str(item["weakness_name"]).split(": ", 1)[-1],
            detected,
            target,
        )
        item.update(
            scheduled_completion_date=target.isoformat(),
            milestone_date=target.isoformat(),
            milestones=milestones,
            planned_milestones=_planned(milestones),
        )
    changes = [c for c in item.get("reviewer_changes", []) if c.get("field") == "target_date"]
    if changes:
        item["milestone_changes"] = "; ".join(
            filter(None, [item.get("milestone_changes"), *map(_change, changes)])
        )


#: Where in its window the first step falls, by severity: a high finding starts at once.
FIRST_SHARE = {"high": 0.1, "medium": 0.25, "low": 0.4}
INTERIM = "Agree an interim measure with the risk owner and record it"


def _milestones(
    severity: str, steps: list[str], title: str, detected: date, scheduled: date
) -> list[dict[str, Any]]:
    """The recommendation's own steps, dated inside the window: the first at a share of it
    set by the severity (sooner for high), the rest spread evenly to the completion date; a
    high finding starts with an interim measure."""
    span = max((scheduled - detected).days, len(steps) + 2)
    subject = title.split(";")[0].strip() or "the practice"
    planned = [s for s in steps if s != INTERIM] or [
        f"Document and approve the policy or procedure for {subject}",
        f"Operate {subject} and keep records of it",
        "Upload the evidence and re-run the evidence analysis",
    ]
    first = FIRST_SHARE.get(severity, 0.25)
    count = len(planned)
    shares = [first + (1 - first) * i / max(count - 1, 1) for i in range(count)]
    if count == 1:
        shares = [1.0]
    dated: list[dict[str, Any]] = [
        {"title": step, "date": (detected + timedelta(days=round(span * share))).isoformat()}
        for step, share in zip(planned, shares, strict=True)
    ]
    if severity == "high":
        interim = (detected + timedelta(days=max(round(span * first / 2), 1))).isoformat()
        dated.insert(0, {"title": INTERIM, "date": interim, "interim": True})
    return dated


def _planned(milestones: list[dict[str, Any]]) -> str:
    return "; ".join(f"{m['date']}: {m['title']}" for m in milestones)


def _changes(gap: dict[str, Any]) -> str:
    """FedRAMP's "Milestone Changes": each reviewer change of the completion date."""
    return "; ".join(
        _change(c) for c in gap.get("reviewer_changes", []) if c.get("field") == "target_date"
    )


def _change(change: dict[str, Any]) -> str:
    moment = str(change.get("at") or "")[:10]
    before = change.get("before") or "the proposed window"
    reason = f" ({change['reason']})" if change.get("reason") else ""
    return (
        f"{moment}: scheduled completion set to {change.get('after')} (was {before}) "
        f"by {change.get('by')}{reason}"
    )


def closed_items(
    previous: dict[str, Any], items: list[dict[str, Any]], today: date, gaps_version: int
) -> list[dict[str, Any]]:
    """Items of the previous POA&M whose finding the gap analysis no longer lists."""
    open_now = {str(item.get("control_id")) for item in items}
    closed = [
        i for i in previous.get("closed_items", []) if str(i.get("control_id")) not in open_now
    ]
    for item in previous.get("items", []):
        if str(item.get("control_id")) in open_now:
            continue
        note = f"Closed {today.isoformat()}: gap analysis v{gaps_version} no longer lists it"
        closed.append(
            {
                **item,
                "status": "Closed",
                "status_date": today.isoformat(),
                "comments": ". ".join(filter(None, [str(item.get("comments") or ""), note])),
            }
        )
    return closed


def parse_date(raw: Any) -> date | None:
    try:
        return date.fromisoformat(str(raw)) if raw else None
    except ValueError:
        return None
