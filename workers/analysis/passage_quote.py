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


def quote(text: str, wanted: set[str], weight: Callable[[str], float]) -> str:
    """The passage's sentence with the most weight of `wanted` terms, cleaned and cut."""
    best, best_score = "", -1.0
    for raw in _SENTENCES.split(text):
        sentence = " ".join(_MARKUP.sub(lambda m: m.group(1) or " ", raw).split())
        sentence = _BULLET.sub("", sentence)
        if len(sentence.split()) < 3:
            continue
        score = sum(weight(t) for t in set(terms(sentence)) & wanted)
        if score > best_score:
            best, best_score = sentence, score
    if len(best) > LONGEST:
        best = best[:LONGEST].rsplit(" ", 1)[0] + "\u2026"
    return best
