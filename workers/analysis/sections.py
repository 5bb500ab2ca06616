"""Non-normative sections: text about a document rather than what the organisation does.

"Purpose and Scope", "Background", "References" (lists of other policies), definitions,
acronym tables, revision histories and tables of contents share a little vocabulary with
every control, so they rank somewhere for everything. They never support a requirement
on their own; a reviewer still sees them among the candidates.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from workers.analysis.framework_quotes import lists_requirements

# A heading that names one of these is about the document, not a practice.
_HEADING = re.compile(
    r"^\s*(?:\d+(?:\.\d+)*\.?\s+)?(?:"
    r"purpose(?:\s+(?:and|&)\s+scope)?|scope(?:\s+(?:and|&)\s+purpose)?|"
    r"objectives?\s+(?:and|&)\s+scope|applicability|background|"
    r"references?|related\s+(?:documents|policies|standards)|"
    r"definitions?|terms(?:\s+(?:and|&)\s+definitions)?|glossary|"
    r"acronyms?|abbreviations?|acronyms\s+(?:and|&)\s+abbreviations|"
    r"(?:revision|document|version|change)\s+(?:history|control|log)|"
    r"table\s+of\s+contents|contents|document\s+(?:owner|approval|information)|"
    r"approvals?|sign[- ]?off|authority"
    r")\s*:?\s*$",
    re.IGNORECASE,
)
_LISTED_DOCUMENT = re.compile(
    r"\b(?:policy|policies|procedures?|standards?|plans?|guidelines?|charter)\s*\.?$",
    re.IGNORECASE,
)
_ACRONYM_ROW = re.compile(r"^\W*[A-Z][A-Z0-9&/-]{1,9}\W{1,6}[A-Z][\w ,/()-]{2,80}$")
_TOC_ROW = re.compile(r"^.{3,90}?(?:\.{3,}|\s{2,}|\t)\s*\d{1,3}\s*$")
_LINK_ROW = re.compile(r"^\W*(?:\[[^\]]+\]\([^)]*\)|https?://\S+|www\.\S+)\W*$")
_SENTENCE_END = re.compile(r"[.!?;](?:\s|$)")
#: A passage of fewer words than this, in one line, without a sentence, is a banner or
#: a heading: it names a subject and states no practice.
BANNER_WORDS = 12


def non_normative(heading_path: str, text: str) -> str | None:
    """What kind of non-normative section a passage is ("purpose", "references", ...),
    or None when it may state a practice."""
    for heading in reversed([h for h in heading_path.split(" > ") if h.strip()]):
        match = _HEADING.match(heading)
        if match:
            return _kind(heading)
        break  # only the passage's own heading decides; its parents may be the title
    lines = [line.strip(" \t-*|•") for line in text.splitlines() if line.strip(" \t-*|•")]
    if _is_banner(lines):
        return "a heading or banner, which names a subject and states no practice"
    if lists_requirements(text):
        return "a list of requirement ids (a matrix or crosswalk row), not a practice"
    if len(lines) >= 3 and _share(lines, _LINK_ROW.match) >= 0.6:
        return "a list of links"
    if len(lines) >= 4:
        if _share(lines, _LISTED_DOCUMENT.search) >= 0.6:
            return "a list of other documents"
        if _share(lines, _ACRONYM_ROW.match) >= 0.6:
            return "an acronym table"
        if _share(lines, _TOC_ROW.match) >= 0.6:
            return "a table of contents"
    return None


def _is_banner(lines: list[str]) -> bool:
    words = sum(len(line.split()) for line in lines)
    if words < 4:
        return True
    return len(lines) == 1 and words < BANNER_WORDS and not _SENTENCE_END.search(lines[0] + " ")


def _kind(heading: str) -> str:
    words = re.sub(r"^[\d.\s]+", "", heading).strip(" :").lower()
    article = "an" if words[:1] in set("aeiou") else "a"
    return f"{article} {words} section"


def _share(lines: list[str], test: Callable[[str], object]) -> float:
    return sum(1 for line in lines if test(line)) / len(lines)
