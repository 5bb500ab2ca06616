"""Categories a framework's requirements fall into, and which a run chose.

SOC 2's Trust Services Criteria are grouped into categories: Security (the common
criteria, CC) is in every SOC 2 examination; Availability (A), Processing Integrity (PI),
Confidentiality (C) and Privacy (P) are chosen with the framework. A requirement of a
category nobody chose is out of scope, with that reason. A framework without categories
has every requirement in scope.

Chosen categories travel with the framework selection as `categories`: a list (for every
selected framework that has categories) or an object keyed by framework name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from orchestrator.catalog.matching import FrameworkChoice, match_key, resolve
from orchestrator.catalog.model import Framework, LoadedCatalog
from orchestrator.contracts.errors import FleetError
from orchestrator.lifecycle.selection import EVERY_FRAMEWORK


@dataclass(frozen=True)
class Category:
    id: str
    name: str
    prefixes: tuple[str, ...]
    """Requirement ids of the category start with one of these, then a digit."""
    always: bool = False
    """In scope whatever is chosen."""

    def names(self) -> set[str]:
        return {match_key(self.id), match_key(self.name), *(match_key(p) for p in self.prefixes)}


_SOC2 = (
    Category("security", "Security", ("CC",), always=True),
    Category("availability", "Availability", ("A",)),
    Category("processing_integrity", "Processing Integrity", ("PI",)),
    Category("confidentiality", "Confidentiality", ("C",)),
    Category("privacy", "Privacy", ("P",)),
)
_BY_FRAMEWORK: dict[str, tuple[Category, ...]] = {"SOC 2": _SOC2}
_PREFIX = re.compile(r"^([A-Za-z]+)\d")


class UnknownCategory(FleetError, ValueError):
    """A chosen category the framework does not have, or categories for a framework
    without any."""


def categories_of(framework: Framework) -> tuple[Category, ...]:
    return _BY_FRAMEWORK.get(framework.name, ())


def category_of(categories: Sequence[Category], requirement_id: str) -> Category | None:
    match = _PREFIX.match(requirement_id)
    if match is None:
        return None
    prefix = match.group(1).upper()
    return next((c for c in categories if prefix in c.prefixes), None)


def chosen(
    selection: Mapping[str, Sequence[str]],
    choices: Sequence[FrameworkChoice],
    catalogs: Sequence[LoadedCatalog],
) -> dict[str, frozenset[str]]:
    """Per selected framework name: the ids of its categories in scope (the always-in ones
    and those chosen). Raises UnknownCategory naming what the framework offers."""
    wanted: dict[str, list[str]] = {}
    for key, names in selection.items():
        targets = _targets(key, choices, catalogs)
        for choice in targets:
            wanted.setdefault(choice.name, []).extend(names)
    result: dict[str, frozenset[str]] = {}
    for choice in choices:
        offered = categories_of(choice.framework)
        if not offered:
            continue
        ids = {c.id for c in offered if c.always}
        ids.update(_category(offered, name, choice.name).id for name in wanted.get(choice.name, []))
        result[choice.name] = frozenset(ids)
    return result


def _targets(
    key: str, choices: Sequence[FrameworkChoice], catalogs: Sequence[LoadedCatalog]
) -> list[FrameworkChoice]:
    with_categories = [c for c in choices if categories_of(c.framework)]
    if key == EVERY_FRAMEWORK:
        if not with_categories:
            raise UnknownCategory(
                "categories were chosen, but no selected framework has categories "
                f"(frameworks with categories: {', '.join(sorted(_BY_FRAMEWORK))})"
            )
        return with_categories
    named = resolve(catalogs, key)
    target = next((c for c in choices if named and c.framework.id == named.framework.id), None)
    if target is None:
        raise UnknownCategory(f"categories name {key!r}, which is not a selected framework")
    if target not in with_categories:
        raise UnknownCategory(f"{target.name} has no categories")
    return [target]


def _category(offered: Sequence[Category], name: str, framework: str) -> Category:
    key = match_key(name)
    found = next((c for c in offered if key in c.names()), None)
    if found is None:
        names = ", ".join(f"{c.id} ({c.name})" for c in offered)
        raise UnknownCategory(f"{framework} has no category {name!r}; its categories: {names}")
    return found
