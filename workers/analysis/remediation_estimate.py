"""Resources a POA&M item needs, as an estimate with its basis: the effort to write,
approve and start operating the missing practice, from what the evidence showed and how
many linked controls are missing. What the documents cannot tell (tools, licences,
hiring, the operating cost) is left undecided for the point of contact, and says so."""

from __future__ import annotations

from typing import Any

from workers.analysis.proposal import AssessedStatus, Proposal

#: Person-days to document one missing control, by what the documents showed.
DAYS_PER_CONTROL = {
    Proposal.NO_EVIDENCE_FOUND.value: 2.0,  # write, review and approve from nothing
    Proposal.TEMPLATE_NOT_ADOPTED.value: 1.0,  # complete and approve what exists
    Proposal.WEAK_EVIDENCE.value: 1.0,  # extend a document that touches on it
}
APPROVAL_DAYS = 1.0  # one review and approval round for the whole item
MOST_CONTROLS = 5  # beyond this a person plans it: the estimate says so
UNDECIDED = "tools, licences, hiring and the cost of operating the practice"


def estimate(gap: dict[str, Any]) -> dict[str, Any]:
    """{"person_days", "basis", "undecided"}; person_days is None when a person must
    estimate the whole (a reviewer's own status, or more controls than the rule covers)."""
    state = str(gap.get("evidence_state") or "")
    controls = len(gap.get("scf_controls") or [])
    if state in (s.value for s in AssessedStatus) or state not in DAYS_PER_CONTROL:
        return {
            "person_days": None,
            "basis": "a reviewer assessed the implementation itself: its effort is not "
            "something the documents show",
            "undecided": "the whole estimate, for the point of contact",
        }
    if controls > MOST_CONTROLS or controls == 0:
        return {
            "person_days": None,
            "basis": f"{controls} linked SCF controls: beyond the documentation rule "
            f"(1 to {MOST_CONTROLS} controls), a person plans it",
            "undecided": "the whole estimate, for the point of contact",
        }
    per = DAYS_PER_CONTROL[state]
    days = per * controls + APPROVAL_DAYS
    return {
        "person_days": days,
        "basis": f"{per:g} person-day(s) per linked SCF control to document "
        f"({state.replace('_', ' ')}) x {controls} + {APPROVAL_DAYS:g} for review and approval",
        "undecided": UNDECIDED,
    }


def stated(found: dict[str, Any]) -> str:
    """FedRAMP's "Resources Required" cell."""
    if found["person_days"] is None:
        return f"Undecided, for the point of contact: {found['basis']}"
    return (
        f"Estimate: {found['person_days']:g} person-days of the owner's time to document and "
        f"approve (basis: {found['basis']}); undecided, for the point of contact: "
        f"{found['undecided']}"
    )
