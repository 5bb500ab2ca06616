"""A gap's severity: SCF relative weighting x evidence state x applicability.

- importance: the highest SCF relative weighting (1-10) of the requirement's linked controls;
- shortfall (0-1): how far the evidence is from showing the requirement, the mean of the
  requirement's own state and its linked controls' states weighted by their weighting (a
  requirement half of whose weight is documented falls short by less than one with none);
- applicability (0-1): the share of the requirement's linked SCF controls that are in scope.

score = importance x shortfall x applicability (0-10): 6 and above high, 3 and above
medium, else low. Likelihood (from the shortfall) and impact (from the importance) are the
two facets FedRAMP rates a risk by. A reviewer's severity replaces the proposed one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workers.analysis.proposal import AssessedStatus, Proposal

LEVELS = ("high", "medium", "low")
#: How far each evidence state is from showing the practice (1: nothing shows it).
SHORTFALL = {
    Proposal.NO_EVIDENCE_FOUND.value: 1.0,
    Proposal.TEMPLATE_NOT_ADOPTED.value: 1.0,
    Proposal.WEAK_EVIDENCE.value: 0.5,
    Proposal.EVIDENCE_FOUND.value: 0.0,
    AssessedStatus.NOT_IMPLEMENTED.value: 1.0,
    AssessedStatus.PARTIALLY_IMPLEMENTED.value: 0.5,
}


@dataclass(frozen=True)
class Severity:
    importance: int
    shortfall: float
    applicability: float

    @property
    def score(self) -> float:
        return round(self.importance * self.shortfall * self.applicability, 2)

    @property
    def level(self) -> str:
        return "high" if self.score >= 6 else ("medium" if self.score >= 3 else "low")

    @property
    def likelihood(self) -> str:
        return _band(self.shortfall * self.applicability, 0.75, 0.4)

    @property
    def impact(self) -> str:
        return _band(self.importance / 10, 0.8, 0.5)

    def as_dict(self) -> dict[str, Any]:
        return {
            "importance": self.importance,
            "shortfall": round(self.shortfall, 2),
            "applicability": round(self.applicability, 2),
            "score": self.score,
            "proposed": self.level,
            "likelihood": self.likelihood,
            "impact": self.impact,
            "stated": self.stated(),
        }

    def stated(self) -> str:
        """The basis in one sentence, as a finding prints it."""
        return (
            f"{self.level}: importance {self.importance} of 10 (the highest SCF weighting of "
            f"the linked controls) x evidence shortfall {self.shortfall:.2f} x applicability "
            f"{self.applicability:.2f} (share of the linked controls in scope) = {self.score} "
            "(6 and above high, 3 and above medium)"
        )


def rate(
    state: str, controls: Sequence[tuple[int, str | None]], linked_in_framework: int
) -> Severity:
    """`state`: the requirement's assessed status or proposal; `controls`: (weighting,
    control-level proposal) of its linked controls in scope; `linked_in_framework`: how many
    SCF controls the framework links to it, in scope or not."""
    own = SHORTFALL.get(state, 1.0)
    total = sum(max(w, 1) for w, _ in controls)
    if total and state not in (s.value for s in AssessedStatus):
        weighted = sum(max(w, 1) * SHORTFALL.get(str(p), own) for w, p in controls) / total
        shortfall = (own + weighted) / 2
    else:
        shortfall = own  # a reviewer's status, or nothing linked: the state alone
    importance = max((w for w, _ in controls), default=0)
    applicability = len(controls) / linked_in_framework if linked_in_framework else 1.0
    return Severity(importance, shortfall, min(applicability, 1.0))


def _band(value: float, high: float, moderate: float) -> str:
    return "high" if value >= high else ("moderate" if value >= moderate else "low")
