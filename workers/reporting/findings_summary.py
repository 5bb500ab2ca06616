"""The report's gap section in brief, so it reads in minutes: the findings counted per
family (the requirement's top-level clause, criterion series or SCF domain) and severity,
then one short line per finding. Each finding's full text is in the report's appendix."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from workers.analysis.severity import LEVELS

#: A requirement id's family: "A.5" of A.5.15, "6" of 6.1.2, "CC6" of CC6.1, "IAC" of IAC-01.
_FAMILY = re.compile(r"^(?:[A-Za-z]+\.?\d+|\d+|[A-Za-z]+)")
FAMILY_HEADERS = ("Family", *(level.capitalize() for level in LEVELS), "Findings")
BRIEF_HEADERS = ("Finding", "Title", "Severity", "Owner")
TOTAL = "All families"


def family_of(gap: dict[str, Any]) -> str:
    requirement = str(gap.get("requirement_id") or gap.get("control_id") or "")
    found = _FAMILY.match(requirement)
    family = found.group(0) if found else requirement
    return f"{gap.get('framework') or ''} {family}".strip()


def family_rows(gaps: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Per family, in order of appearance in the catalogue's ids: the findings at each
    severity and in all; then the totals."""
    counts: dict[str, Counter[str]] = {}
    for gap in sorted(gaps, key=lambda g: natural_key(family_of(g))):
        counts.setdefault(family_of(gap), Counter())[str(gap.get("severity"))] += 1
    rows: list[tuple[Any, ...]] = [
        (family, *(counted[level] for level in LEVELS), sum(counted.values()))
        for family, counted in counts.items()
    ]
    every = Counter(str(g.get("severity")) for g in gaps)
    return [*rows, (TOTAL, *(every[level] for level in LEVELS), len(gaps))]


def brief_rows(gaps: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (g.get("control_id"), g.get("title"), g.get("severity"), g.get("owner") or "unassigned")
        for g in gaps
    ]


def natural_key(text: str) -> list[Any]:
    """Text in order with its numbers as numbers (A.5 before A.10)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]
