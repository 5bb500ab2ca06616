"""What a similarity score means for a control: coverage, gaps and their severity.

Scores are the KB's exact term cosine (stemmed words and word pairs, sublinear tf)
between a control's query (title and keywords) and a chunk. Passages that merely
share a generic word ("management", "data") score under 0.15; a passage on the
control's topic 0.18 and up; one written about exactly that control 0.30 and up.
"""

from __future__ import annotations

EVIDENCE_THRESHOLD = 0.18
"""Best evidence below this is a gap: nothing in the KB clearly speaks to the control."""
STRONG_THRESHOLD = 0.30
"""Best evidence from here on covers the control well."""
TOP_EVIDENCE = 3


def coverage(score: float) -> str:
    if score >= STRONG_THRESHOLD:
        return "strong"
    return "partial" if score >= EVIDENCE_THRESHOLD else "none"


def is_gap(score: float) -> bool:
    return score < EVIDENCE_THRESHOLD


def severity(score: float) -> str:
    """How far below the evidence threshold a gap's best evidence is."""
    if score < EVIDENCE_THRESHOLD / 3:
        return "high"
    return "medium" if score < 2 * EVIDENCE_THRESHOLD / 3 else "low"
