"""What a similarity score means for a control: coverage, gaps and their severity.

Scores are cosine similarities from the KB's hashing embedder. Unrelated text scores
around 0 +- 0.1 (hash collisions), text on the control's topic 0.2 and up, text
written about exactly that control 0.35 and up.
"""

from __future__ import annotations

EVIDENCE_THRESHOLD = 0.20
"""Best evidence below this is a gap: nothing in the KB clearly speaks to the control."""
STRONG_THRESHOLD = 0.35
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
