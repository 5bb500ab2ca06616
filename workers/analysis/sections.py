"""Non-normative sections: text about a document rather than what the organisation does.

"Purpose and Scope", "Background", "References" (lists of other policies), definitions,
acronym tables, revision histories and tables of contents share a little vocabulary with
every control, so they rank somewhere for everything. They never support a requirement
on their own; a reviewer still sees them among the candidates. Nor does a quotation: a
policy that sets a standard's control text in a block quote (in italics or quotation
marks, or with its source below it) says what the standard asks, in the standard's own
words, which match the requirement best of all and prove nothing.
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
_QUOTED_LINE = re.compile(r"^\s*>")
#: A block-quoted line set as a quotation: in italics (not bold), in quotation marks, or
#: the source's attribution ("> — ISO/IEC ..."). A call-out box ("> **Note**: ...") is not.
_QUOTATION = re.compile(r"^\s*>\s*(?:\*(?!\*)|_(?!_)|[\"\u201c\u2018]|(?:\u2014|--)\s*\w)")
#: The share of a passage's words in block-quoted lines from which it is a quotation.
QUOTED_SHARE = 0.6
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
    return _by_content(text)


def _by_content(text: str) -> str | None:
    lines = [line.strip(" \t-*|•") for line in text.splitlines() if line.strip(" \t-*|•")]
    if _is_quotation(text):
        return "a quotation of another text (a standard's own words), not a practice"
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


def _is_quotation(text: str) -> bool:
    raw = [line for line in text.splitlines() if line.strip(" \t>")]
    quoted = [line for line in raw if _QUOTED_LINE.match(line)]
    if not quoted or not any(_QUOTATION.match(line) for line in quoted):
        return False
    words = sum(len(line.split()) for line in raw)
    return sum(len(line.split()) for line in quoted) >= QUOTED_SHARE * words


def _kind(heading: str) -> str:
    words = re.sub(r"^[\d.\s]+", "", heading).strip(" :").lower()
    article = "an" if words[:1] in set("aeiou") else "a"
    return f"{article} {words} section"


def _share(lines: list[str], test: Callable[[str], object]) -> float:
    return sum(1 for line in lines if test(line)) / len(lines)
