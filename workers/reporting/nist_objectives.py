"""The assessment plan's objectives and methods: for each NIST SP 800-53 control its
activities relate to (the requirements' ids through the crosswalk), SP 800-53A's assessment
objectives and its EXAMINE method's objects, the catalog's own parts verbatim, from the
NIST SP 800-53 rev5 catalogue the run pinned. A run that pinned none, or one whose
catalog carries no SP 800-53A parts (the 5.0 release), lists none, and the plan says why."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.catalog.oscal import SP800_53A
from workers.analysis.nist_crosswalk import oscal_control_id

NIST_800_53_REV5 = "NIST SP 800-53 rev5"


def plan_objectives(
    catalogs: Iterable[LoadedCatalog], gaps: dict[str, Any]
) -> list[dict[str, Any]]:
    """The local objectives of every NIST id the gap analysis's requirements cross to."""
    ids = (i for per_requirement in requirement_nist_ids(gaps).values() for i in per_requirement)
    return local_objectives(nist_catalogue(catalogs), ids)


def nist_catalogue(catalogs: Iterable[LoadedCatalog]) -> LoadedCatalog | None:
    """The run's pinned NIST SP 800-53 rev5 catalogue, if it pinned one."""
    return next(
        (c for c in catalogs if c.info.kind == "oscal_catalog" and c.info.name == NIST_800_53_REV5),
        None,
    )


def local_objectives(
    catalog: LoadedCatalog | None, nist_ids: Iterable[str]
) -> list[dict[str, Any]]:
    """One OSCAL local objective per NIST id the catalogue examines, in the order given."""
    if catalog is None:
        return []
    source = f"{catalog.info.name} {catalog.info.version} ({catalog.info.source_name})"
    found: list[dict[str, Any]] = []
    for nist_id in dict.fromkeys(nist_ids):
        control = catalog.control(nist_id)
        parts = control.details.get(SP800_53A) if control is not None else None
        if not parts:
            continue
        found.append(
            {
                "control-id": oscal_control_id(nist_id),
                "description": f"NIST SP 800-53A assessment objectives of {nist_id} and the "
                f"objects its EXAMINE method names, verbatim from {source}.",
                "parts": parts,
            }
        )
    return found


def examined_objectives(
    objectives: list[dict[str, Any]], activities: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The objectives of the NIST controls the plan's activities relate to (applicable
    requirements only: a requirement out of scope has no activity)."""
    related = {
        control["control-id"]
        for activity in activities
        for selection in (activity.get("related-controls") or {}).get("control-selections", [])
        for control in selection.get("include-controls", [])
    }
    return [o for o in objectives if o["control-id"] in related]


def requirement_nist_ids(gaps: dict[str, Any]) -> dict[str, list[str]]:
    """Requirement label -> its NIST SP 800-53 rev5 ids (the gap analysis's crosswalk)."""
    found: dict[str, list[str]] = {}
    for row in [*gaps.get("gaps", []), *gaps.get("met", [])]:
        ids = found.setdefault(str(row.get("control_id")), [])
        ids.extend(str(i) for i in row.get("nist_controls") or [] if str(i) not in ids)
    return found
