"""The POA&M as every export states it: an item amended on this very POA&M (an owner, a
date, a severity set by a reviewer) shows those values as its point of contact, plan and
rating, in the CSV, the XLSX, the report's JSON and OSCAL alike, so no export still says
"Unassigned" where another names the owner."""

from __future__ import annotations

import copy
from typing import Any

from workers.analysis.poam import apply_reviewer_values

LISTS = ("items", "closed_items")


def stated_items(poam: dict[str, Any], listed: str = "items") -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for item in poam.get(listed, []):
        if item.get("amended"):
            item = copy.deepcopy(item)
            apply_reviewer_values(item)
        found.append(item)
    return found


def stated_poam(poam: dict[str, Any]) -> dict[str, Any]:
    return {**poam, **{listed: stated_items(poam, listed) for listed in LISTS if listed in poam}}
