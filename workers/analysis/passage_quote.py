"""The sentence of a passage a reason quotes: the one sharing most of the requirement's
specific words, as the assessor would underline it."""

from __future__ import annotations

import re
from collections.abc import Callable

from orchestrator.knowledge.lexical import terms

LONGEST = 220  # characters quoted; a longer sentence is cut at a word and marked
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n\s*\n|\n(?=\s*(?:[-*+•|]|\d{1,2}[.)])\s)")
_BULLET = re.compile(r"^(?:[-+•]|\d{1,2}[.)])\s+")
_MARKUP = re.compile(r"[*_`#>|]+|!!!\s*\w+|\[([^\]]*)\]\([^)]*\)")

Sentences = list[tuple[str, frozenset[str]]]


def sentences(text: str) -> Sentences:
    """A passage's sentences, cleaned of markup, each with its terms (computed once per
    passage: many requirements quote the same passage)."""
    out = []
    for raw in _SENTENCES.split(text):
        sentence = " ".join(_MARKUP.sub(lambda m: m.group(1) or " ", raw).split())
        sentence = _BULLET.sub("", sentence)
        if len(sentence.split()) >= 3:
            out.append((sentence, frozenset(terms(sentence))))
    return out


def quote(found: Sentences, wanted: set[str], weight: Callable[[str], float]) -> str:
    """The sentence with the most weight of `wanted` terms, cut to LONGEST characters."""
    best, best_score = "", -1.0
    for sentence, own in found:
        score = sum(weight(t) for t in own & wanted)
        if score > best_score:
            best, best_score = sentence, score
    if len(best) > LONGEST:
        best = best[:LONGEST].rsplit(" ", 1)[0] + "\u2026"
    return best
