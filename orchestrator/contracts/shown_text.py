"""Text shown to a person: bidirectional control characters made visible.

A right-to-left override (U+202E) or another bidi control in a name a person chose (a
file's, an assessment's) reorders what follows it on screen: `invoice\\u202egpj.md` reads
as "invoicedm.jpg". Wherever such text is displayed, each control is replaced by its code
point in brackets (`invoice[U+202E]gpj.md`), so the name reads as what it is.
"""

from __future__ import annotations

import re
from typing import TypeVar

#: The explicit embeddings, overrides and isolates, the marks, and the Arabic letter mark.
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

T = TypeVar("T")


def shown(value: T) -> T | str:
    """A string with its bidi controls made visible; any other value as it is. A str
    subclass (a template's safe markup) keeps its class."""
    if not isinstance(value, str) or BIDI_CONTROLS.search(value) is None:
        return value
    return type(value)(BIDI_CONTROLS.sub(lambda found: f"[U+{ord(found.group()):04X}]", value))
