"""The assessment's people as the OSCAL exports name them: metadata parties and roles, and
the responsible parties of the plan's tasks, the observations, findings and remediations.

Every export reads people through `assessment_people` alone, so that they follow wherever
the assessment records its people. Today that is the run itself: each approver with the
roles their approvals carried, each reviewer who amended an input, and each person set as
the owner of a gap finding or POA&M item (a proposed role is no person and is left out).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workers.reporting.poam_stated import stated_items
from workers.reporting.render import ReportInput

REVIEWER = "reviewer"
"""The role of a person who amended an input (their approval, if any, adds its roles)."""
OWNER = "remediation-owner"
"""The role of a person set as the owner of a gap finding or POA&M item."""
APPROVER = "approver"
"""The role of an approval that carried none."""
RISK_OWNER = "risk-owner"
"""The owner of a register risk a gap finding raised."""
RISK_ACCEPTOR = "risk-acceptor"
"""Who accepted a register risk's residual risk."""


@dataclass(frozen=True)
class Person:
    name: str
    roles: tuple[str, ...]


def assessment_people(report: ReportInput) -> list[Person]:
    """Everyone the run records, each once with all their roles, by name."""
    roles: dict[str, set[str]] = {}
    for entry in report.signoff:
        for name in entry.get("amended_by", []):
            roles.setdefault(str(name), set()).add(REVIEWER)
        for approval in entry.get("approvals", []):
            named = roles.setdefault(str(approval.get("approver_id")), set())
            named.update(str(role) for role in approval.get("roles") or [APPROVER])
    for owner in owners(report).values():
        roles.setdefault(owner, set()).add(OWNER)
    for risk in report.risks:
        roles.setdefault(str(risk["owner"]), set()).add(RISK_OWNER)
        if risk.get("accepted_by"):
            roles.setdefault(str(risk["accepted_by"]), set()).add(RISK_ACCEPTOR)
        for decision in risk.get("decisions", []):
            if decision.get("decided_by"):
                roles.setdefault(str(decision["decided_by"]), set()).add(REVIEWER)
    return [Person(name, tuple(sorted(roles[name]))) for name in sorted(roles)]


def owners(report: ReportInput) -> dict[str, str]:
    """Requirement label (the `control_id` of a gap and of its POA&M item) -> the person a
    reviewer set as its owner; a POA&M item's owner stands over its gap's."""
    found = {
        str(gap.get("control_id")): str(gap["owner"]).strip()
        for gap in report.gaps.get("gaps", [])
        if str(gap.get("owner") or "").strip()
    }
    for listed in ("items", "closed_items"):
        for item in stated_items(report.poam, listed):
            if item.get("owner_assigned") and str(item.get("owner") or "").strip():
                found[str(item.get("control_id"))] = str(item["owner"]).strip()
    return found


def approvers(report: ReportInput, *kinds: str) -> dict[str, list[str]]:
    """Who approved these inputs, by the role their approval carried: who answers for
    what those inputs hold."""
    found: dict[str, list[str]] = {}
    for entry in report.signoff:
        if entry.get("kind") not in kinds:
            continue
        for approval in entry.get("approvals", []):
            name = str(approval.get("approver_id"))
            for role in approval.get("roles") or [APPROVER]:
                if name not in found.setdefault(str(role), []):
                    found[str(role)].append(name)
    return found


def poam_responsible(report: ReportInput, item: dict[str, Any]) -> dict[str, list[str]]:
    """Who answers for a POA&M item, by role: its owner once a person is set, until then
    the people who approved the POA&M (they accepted it unassigned)."""
    owner = str(item.get("owner") or "").strip() if item.get("owner_assigned") else ""
    return {OWNER: [owner]} if owner else approvers(report, "poam")


def named(by_role: dict[str, list[str]]) -> list[str]:
    """The people of a role -> people map, each once."""
    return list(dict.fromkeys(p for people in by_role.values() for p in people))
