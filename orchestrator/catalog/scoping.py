"""A scope drafted from the crosswalk: one row per requirement of each selected framework,
each with its linked SCF controls, and the union of those controls by SCF domain.

Its size is the crosswalk's: for SOC 2 on the 2022.3 workbook, every control whose TSC
column is filled. Pure: the caller passes the pinned catalogues and what it found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from orchestrator.catalog.matching import FrameworkChoice, linked_requirements, scf_catalog
from orchestrator.catalog.model import LoadedCatalog


class NoScfCatalog(LookupError):
    """The pinned catalogues hold no SCF workbook, so nothing can be scoped to SCF controls."""


def catalog_reference(catalog: LoadedCatalog) -> dict[str, Any]:
    """How drafts name the catalogue version they use, with the attribution it requires."""
    info = catalog.info
    return {
        "id": str(info.id),
        "name": info.name,
        "version": info.version,
        "sha256": info.sha256,
        "licence": info.licence,
        "attribution": info.attribution,
    }


def draft_scope(
    catalogs: Sequence[LoadedCatalog],
    choices: Sequence[FrameworkChoice],
    found: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    scf = scf_catalog(catalogs)
    if scf is None:
        raise NoScfCatalog("the run's pinned catalogues hold no SCF workbook")
    found = found or {}
    by_control: dict[str, list[str]] = {}
    frameworks: list[dict[str, Any]] = []
    for choice in choices:
        requirements = linked_requirements(choice, catalogs)
        rows: list[dict[str, Any]] = []
        for requirement in requirements:
            controls = [c for c in requirement.control_ids if scf.control(c) is not None]
            for control_id in controls:
                by_control.setdefault(control_id, []).append(f"{choice.name} {requirement.id}")
            rows.append(
                {"requirement_id": requirement.id, "title": requirement.title, "controls": controls}
            )
        linked = {c for row in rows for c in row["controls"]}
        frameworks.append(
            {
                "id": str(choice.framework.id),
                "name": choice.name,
                "version": choice.framework.version,
                "kind": choice.framework.kind,
                "catalog": catalog_reference(choice.catalog),
                "requirements": rows,
                "summary": {
                    "requirements": len(rows),
                    "unlinked_requirements": sum(1 for r in rows if not r["controls"]),
                    "controls": len(linked),
                },
            }
        )
    names = [choice.name for choice in choices]
    domains = _domains(scf, by_control, found)
    in_scope = {d["domain"] for d in domains}
    out_of_scope = [
        {
            "domain": code,
            "name": name,
            "reason": f"no requirement of {', '.join(names)} links to this domain",
        }
        for code, name in sorted(scf.domains.items())
        if code not in in_scope
    ]
    return {
        "framework": "; ".join(names),
        "frameworks": frameworks,
        "catalog": catalog_reference(scf),
        "attribution": scf.info.attribution,
        "domains": domains,
        "out_of_scope": out_of_scope,
        "summary": {
            "framework": "; ".join(names),
            "frameworks": len(frameworks),
            "requirements": sum(f["summary"]["requirements"] for f in frameworks),
            "controls_in_scope": len(by_control),
            "domains_in_scope": len(domains),
            "domains_out_of_scope": len(out_of_scope),
            "catalog": f"{scf.info.name} {scf.info.version}",
        },
    }


def _domains(
    scf: LoadedCatalog, by_control: dict[str, list[str]], found: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for control in scf.controls:  # catalogue order
        requirements = by_control.get(control.id)
        if requirements is None:
            continue
        row = found.get(control.id, {})
        grouped.setdefault(control.domain, []).append(
            {
                **control.header(),
                "requirements": requirements,
                "best_score": row.get("best_score", 0.0),
                "coverage": row.get("coverage", "none"),
            }
        )
    names = scf.domains
    return [
        {"domain": code, "name": names[code], "controls": controls}
        for code, controls in sorted(grouped.items())
    ]
