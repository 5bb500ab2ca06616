"""Group headings that crosswalk columns write among requirement ids.

The SCF workbook's columns sometimes name a group as well as its members: SOC 2's "P1.0"
heads the privacy criteria P1.1, P1.2; CIS Controls' "4.0" heads safeguards 4.1, 4.2.
A heading is not a requirement anyone assesses, so it never becomes a row: an id ending
in ".0" is a heading when the same column also holds a sibling with the same stem.
"""

from __future__ import annotations

from collections.abc import Iterable

_SUFFIX = ".0"


def headings(ids: Iterable[str]) -> frozenset[str]:
    listed = list(ids)
    stems = {rid.rsplit(".", 1)[0] for rid in listed if "." in rid and not rid.endswith(_SUFFIX)}
    return frozenset(
        rid for rid in listed if rid.endswith(_SUFFIX) and rid[: -len(_SUFFIX)] in stems
    )
