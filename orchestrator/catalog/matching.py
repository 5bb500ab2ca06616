"""Framework names as people write them, matched to the frameworks of pinned catalogues.

"ISO/IEC 27001:2022", "ISO 27001:2022" and "iso 27001 2022" are one key; "SOC 2 Type II"
finds "SOC 2" (the longest name it starts with). An unknown name gets the list of known
frameworks and the closest ones.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from orchestrator.catalog.headings import headings
from orchestrator.catalog.model import Framework, LoadedCatalog, Requirement
from orchestrator.contracts.errors import FleetError

# On equal names, a framework read from its own catalogue (OSCAL) wins over a crosswalk column.
_PREFERENCE = {"oscal_profile": 0, "oscal_catalog": 1, "scf": 2, "scf_mapping": 3}
MAX_SUGGESTIONS = 5


class UnknownFramework(FleetError, ValueError):
    def __init__(
        self, unknown: Sequence[str], available: list[str], suggestions: dict[str, list[str]]
    ) -> None:
        names = ", ".join(repr(n) for n in unknown)
        hints = "; ".join(
            f"for {n!r} did you mean {', '.join(s)}?" for n, s in suggestions.items() if s
        )
        super().__init__(f"unknown framework {names}" + (f" ({hints})" if hints else ""))
        self.unknown = list(unknown)
        self.available = available
        self.suggestions = suggestions


@dataclass(frozen=True)
class FrameworkChoice:
    framework: Framework
    catalog: LoadedCatalog

    @property
    def name(self) -> str:
        return self.framework.name


def match_key(text: str) -> str:
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    for long, short in (
        ("isoiec", "iso"),
        ("nistsp", "nist"),
        ("revision", "rev"),
        ("specialpublication", "sp"),
    ):
        key = key.replace(long, short)
    return key


def _keys(framework: Framework) -> set[str]:
    texts = [framework.name, *framework.aliases]
    if framework.version and framework.version not in framework.name:
        texts.append(f"{framework.name} {framework.version}")
    return {match_key(t) for t in texts if t}


def _candidates(catalogs: Iterable[LoadedCatalog]) -> list[FrameworkChoice]:
    choices = [FrameworkChoice(f, c) for c in catalogs for f in c.frameworks]
    return sorted(choices, key=lambda ch: _PREFERENCE.get(ch.framework.kind, 9))


def resolve(catalogs: Sequence[LoadedCatalog], requested: str) -> FrameworkChoice | None:
    wanted = match_key(requested)
    if not wanted:
        return None
    best: tuple[int, FrameworkChoice] | None = None
    for choice in _candidates(catalogs):
        keys = _keys(choice.framework)
        if wanted in keys:
            return choice
        # "SOC 2 Type II" is SOC 2; "SCF 2099.1" is not SCF 2022.3: no digits after a prefix.
        prefix = max(
            (
                len(k)
                for k in keys
                if wanted.startswith(k) and not any(ch.isdigit() for ch in wanted[len(k) :])
            ),
            default=0,
        )
        if prefix and (best is None or prefix > best[0]):
            best = (prefix, choice)
    return best[1] if best else None


def resolve_many(
    catalogs: Sequence[LoadedCatalog], requested: Sequence[str]
) -> list[FrameworkChoice]:
    """Every requested framework, once each, in the order asked; unknown names raise."""
    found: list[FrameworkChoice] = []
    unknown: list[str] = []
    for name in requested:
        choice = resolve(catalogs, name)
        if choice is None:
            unknown.append(name)
        elif all(c.framework.id != choice.framework.id for c in found):
            found.append(choice)
    if unknown:
        raise UnknownFramework(
            unknown, available_names(catalogs), {n: suggest(catalogs, n) for n in unknown}
        )
    return found


def available_names(catalogs: Sequence[LoadedCatalog]) -> list[str]:
    names: list[str] = []
    for choice in _candidates(catalogs):
        if choice.framework.name not in names:
            names.append(choice.framework.name)
    return sorted(names, key=str.lower)


def suggest(catalogs: Sequence[LoadedCatalog], requested: str) -> list[str]:
    """Close matches: similar spelling first, then names that contain what was asked."""
    wanted = match_key(requested)
    by_key: dict[str, str] = {}
    for choice in _candidates(catalogs):
        for key in _keys(choice.framework):
            by_key.setdefault(key, choice.framework.name)
    close = [by_key[k] for k in difflib.get_close_matches(wanted, list(by_key), n=10, cutoff=0.6)]
    starting = sorted({name for key, name in by_key.items() if wanted and key.startswith(wanted)})
    containing = sorted({name for key, name in by_key.items() if wanted and wanted in key})
    out: list[str] = []
    # "ISO" asks for the ISO standards before names that merely look alike ("US SOX").
    ordered = (
        [*starting, *close, *containing] if len(wanted) <= 4 else [*close, *starting, *containing]
    )
    for name in ordered:
        if name not in out:
            out.append(name)
    return out[:MAX_SUGGESTIONS]


def linked_requirements(
    choice: FrameworkChoice, catalogs: Sequence[LoadedCatalog]
) -> tuple[Requirement, ...]:
    """The framework's requirements, each with its linked SCF controls; group headings
    (`orchestrator.catalog.headings`) are not requirements.

    A framework read from its own catalogue (OSCAL) links through the SCF crosswalk column
    named by `crosswalk` in the pinned SCF catalogue.
    """
    framework = choice.framework
    if framework.crosswalk is None:
        dropped = headings(r.id for r in framework.requirements)
        return tuple(r for r in framework.requirements if r.id not in dropped)
    scf = scf_catalog(catalogs)
    column = scf.framework(framework.crosswalk) if scf else None
    links = {r.id: r.control_ids for r in column.requirements} if column else {}
    return tuple(
        Requirement(id=r.id, title=r.title, control_ids=links.get(r.id, ()))
        for r in framework.requirements
    )


def scf_catalog(catalogs: Sequence[LoadedCatalog]) -> LoadedCatalog | None:
    return next((c for c in catalogs if c.info.kind == "scf_workbook"), None)
