"""Passages and documents that quote the framework instead of stating a practice.

An index page, a crosswalk or a control matrix lists requirement ids, often beside the
requirement's own words. Matched against that requirement it ranks first, and proves
nothing: the match is circular. So is a policy sentence copied from the control's text.
Neither supports a requirement on its own, and neither is a first citation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from orchestrator.knowledge.lexical import terms

# Requirement and control ids of the frameworks people assess against: SOC 2 (CC6.1,
# PI1.2), ISO/IEC 27001 Annex A (A.5.15, A 8.2), NIST CSF (PR.AC-1, GV.OC-01), NIST SP
# 800-53 (AC-2, AC-2(1)), PCI DSS (Req. 8.3.1) and SCF itself (IAC-01.2).
_IDS = re.compile(
    r"\b(?:"
    r"(?:CC|PI|[ACP])\d{1,2}\.\d{1,2}"
    r"|A\.?\s?[5-8]\.\d{1,2}"
    r"|(?:ID|PR|DE|RS|RC|GV)\.[A-Z]{2}-\d{1,2}"
    r"|[A-Z]{2}-\d{1,2}(?:\(\d{1,2}\))?"
    r"|[A-Z]{3}-\d{2}(?:\.\d{1,2})?"
    r"|Req(?:uirement)?\.?\s\d{1,2}\.\d{1,2}(?:\.\d{1,2})?"
    r")(?![\w.-]*\d)"
)
#: A passage naming this many distinct ids is a row of a matrix, not a practice.
IDS_IN_A_PASSAGE = 3
#: A document naming this many ids, in this share of its passages, is an index.
IDS_IN_AN_INDEX = 10
INDEX_SHARE = 0.3
#: Consecutive words shared with a control's own text that make a passage a quote of it.
QUOTED_WORDS = 8


def ids_named(text: str) -> set[str]:
    return {re.sub(r"\s", "", m.group(0)) for m in _IDS.finditer(text)}


def lists_requirements(text: str) -> bool:
    return len(ids_named(text)) >= IDS_IN_A_PASSAGE


def index_documents(passages: Iterable[tuple[str, str]]) -> dict[str, str]:
    """{document id: why} for documents that index or cross-walk requirements: many ids,
    named throughout. `passages` are (document id, text)."""
    named: dict[str, set[str]] = {}
    counts: dict[str, list[int]] = {}
    for document_id, text in passages:
        found = ids_named(text)
        named.setdefault(document_id, set()).update(found)
        tally = counts.setdefault(document_id, [0, 0])
        tally[0] += bool(found)
        tally[1] += 1
    return {
        document_id: (
            f"an index or crosswalk of requirements ({len(ids)} requirement ids named in "
            f"{counts[document_id][0]} of its {counts[document_id][1]} passages), which "
            "quotes the framework rather than stating a practice"
        )
        for document_id, ids in named.items()
        if len(ids) >= IDS_IN_AN_INDEX
        and counts[document_id][0] >= INDEX_SHARE * counts[document_id][1]
    }


class ControlQuotes:
    """Whether a passage repeats QUOTED_WORDS consecutive words of a control's texts."""

    def __init__(self, texts_of: Callable[[str], Sequence[str]]) -> None:
        self._texts_of = texts_of
        self._shingles: dict[str, set[tuple[str, ...]]] = {}

    def quoted(self, mine: frozenset[tuple[str, ...]], control_ids: Iterable[str]) -> str | None:
        """The first of `control_ids` whose text a passage (its `shingles`) quotes, if any."""
        if not mine:
            return None
        for control_id in control_ids:
            if control_id not in self._shingles:
                own = self._texts_of(control_id)
                self._shingles[control_id] = {s for t in own for s in _shingles(terms(t))}
            if mine & self._shingles[control_id]:
                return control_id
        return None


def shingles(text: str) -> frozenset[tuple[str, ...]]:
    """A passage's runs of QUOTED_WORDS consecutive terms."""
    return frozenset(_shingles(terms(text)))


def _shingles(words: list[str]) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + QUOTED_WORDS]) for i in range(len(words) - QUOTED_WORDS + 1)]
