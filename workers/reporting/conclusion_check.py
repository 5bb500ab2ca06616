"""Does the assessor's conclusion agree with the figures? One stated rule, no judgement
beyond it: a conclusion that claims the requirements are largely met while most
requirements in scope are gaps (or claims most are unmet while few are) is flagged, with
the figures, for the assessor to reword or to explain. It warns; it never edits."""

from __future__ import annotations

import re

from workers.reporting.figures import Figures

#: Words of a conclusion that says the requirements are largely met.
FAVOURABLE = re.compile(
    r"\b(address(?:es)?|meets?|satisf(?:y|ies)|compl(?:y|ies)|covers?|fulfil+s?)\s+(?:most|all|the)"
    r"|\b(?:largely|substantially|fully|broadly)\s+(?:compliant|met|meets|implemented|addresse)"
    r"|\bno (?:significant|material|major) (?:gaps|findings)|\beffective\b|\bcompliant\b",
    re.IGNORECASE,
)
#: Words of a conclusion that says most requirements are not met.
UNFAVOURABLE = re.compile(
    r"\b(?:does not|doesn't|fails to)\s+(?:address|meet|satisfy)|\bnot (?:compliant|met)\b"
    r"|\b(?:significant|material|major|many) (?:gaps|findings)|\bineffective\b",
    re.IGNORECASE,
)
RULE = (
    "a conclusion claiming the requirements are largely met is flagged when more than half "
    "of the requirements in scope are gaps; one claiming they are largely unmet, when fewer "
    "than a quarter are"
)


def conclusion_warning(conclusion: str | None, counted: Figures) -> str | None:
    """The warning to print beside the conclusion, or None when it agrees (or is unset)."""
    if not conclusion or not counted.requirements_in_scope:
        return None
    share = counted.gap_share
    said = (
        f"{counted.gaps} of the {counted.requirements_in_scope} requirements in scope are gaps "
        f"({share:.0%})"
    )
    negated = UNFAVOURABLE.search(conclusion)
    if FAVOURABLE.search(conclusion) and not negated and share > 0.5:
        return f"The conclusion reads as largely met, but {said}. Rule: {RULE}."
    if negated and share < 0.25:
        return f"The conclusion reads as largely unmet, but only {said}. Rule: {RULE}."
    return None
