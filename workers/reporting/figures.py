"""The report's headline figures, each counted from the drafts' in-scope rows (never from
a stored summary, never from rows out of scope), so a test can count them again from the
evidence and gap drafts and find the same numbers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workers.analysis.dismissals import dismissed_gaps, open_gaps
from workers.soa_content import soa_rows

Content = dict[str, Any]
PROPOSALS = ("evidence_found", "weak_evidence", "no_evidence_found", "template_not_adopted")


@dataclass(frozen=True)
class Figures:
    soa_rows: int
    soa_applicable: int
    evidence_rows_in_scope: int
    """Rows of the evidence draft in scope (a requirement's sub-items each a row)."""
    proposals: dict[str, int]
    """In-scope evidence rows per proposal."""
    requirements_in_scope: int
    """Requirements the gap draft assessed (sub-items rolled up), in scope."""
    requirements_met: int
    gaps: int
    by_severity: dict[str, int]
    out_of_scope: int
    """Requirements not applicable in the approved SoA, counted apart."""
    not_a_gap: int = 0
    """Findings a reviewer dismissed as not a gap: assessed in scope, neither gap nor met."""

    @property
    def gap_share(self) -> float:
        return self.gaps / self.requirements_in_scope if self.requirements_in_scope else 0.0


def figures(soa: Content, evidence: Content, gaps: Content) -> Figures:
    rows = soa_rows(soa)
    in_scope = [r for r in evidence.get("requirements", []) if r.get("applicable") is not False]
    listed = open_gaps(gaps)
    dismissed = dismissed_gaps(gaps)
    met = list(gaps.get("met", []))
    return Figures(
        soa_rows=len(rows),
        soa_applicable=sum(1 for r in rows if r.get("applicable")),
        evidence_rows_in_scope=len(in_scope),
        proposals={p: sum(1 for r in in_scope if r.get("proposal") == p) for p in PROPOSALS},
        requirements_in_scope=len(listed) + len(dismissed) + len(met),
        requirements_met=len(met),
        gaps=len(listed),
        not_a_gap=len(dismissed),
        by_severity={
            level: sum(1 for g in listed if g.get("severity") == level)
            for level in ("high", "medium", "low")
        },
        out_of_scope=len(gaps.get("not_applicable", [])),
    )
