"""A scope drafted from the crosswalk: one row per requirement of each selected framework,
each with its linked SCF controls, and the union of those controls by SCF domain.

Where a framework has categories (SOC 2), a requirement of a category the run did not
choose is listed out of scope with the reason, and links no control into the scope.

Its size is the crosswalk's: for SOC 2 on the 2022.3 workbook, every control whose TSC
column is filled. Pure: the caller passes the pinned catalogues and what it found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from orchestrator.catalog.categories import Category, categories_of, category_of
from orchestrator.catalog.headings import headings
from orchestrator.catalog.matching import FrameworkChoice, linked_requirements, scf_catalog
from orchestrator.catalog.model import LoadedCatalog, Requirement
from orchestrator.contracts.errors import FleetError


class NoScfCatalog(FleetError, LookupError):
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
    categories: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, Any]:
    """`categories`: per framework name, the ids of its categories in scope
    (`orchestrator.catalog.categories.chosen`); a framework with categories that has no
    entry keeps only those always in scope."""
    scf = scf_catalog(catalogs)
    if scf is None:
        raise NoScfCatalog("the run's pinned catalogues hold no SCF workbook")
    found = found or {}
    by_control: dict[str, list[str]] = {}
    frameworks: list[dict[str, Any]] = []
    for choice in choices:
        offered = categories_of(choice.framework)
        in_scope_ids = (categories or {}).get(choice.name) or {c.id for c in offered if c.always}
        rows: list[dict[str, Any]] = []
        for requirement in linked_requirements(choice, catalogs):
            row = _requirement_row(requirement, scf, offered, in_scope_ids, choice.name)
            if row["in_scope"]:
                for control_id in row["controls"]:
                    by_control.setdefault(control_id, []).append(f"{choice.name} {requirement.id}")
            rows.append(row)
        frameworks.append(_framework_entry(choice, rows, offered, in_scope_ids))
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


def _requirement_row(
    requirement: Requirement,
    scf: LoadedCatalog,
    offered: Sequence[Category],
    in_scope_ids: set[str] | frozenset[str],
    framework: str,
) -> dict[str, Any]:
    controls = [c for c in requirement.control_ids if scf.control(c) is not None]
    row: dict[str, Any] = {
        "requirement_id": requirement.id,
        "title": requirement.title,
        "controls": controls,
        "in_scope": True,
    }
    category = category_of(offered, requirement.id)
    if category is not None:
        row["category"] = category.id
        if category.id not in in_scope_ids:
            row["in_scope"] = False
            row["out_of_scope_reason"] = _not_chosen(framework, category, offered)
    return row


def _not_chosen(framework: str, category: Category, offered: Sequence[Category]) -> str:
    always = ", ".join(c.name for c in offered if c.always)
    return (
        f"Out of scope: the {category.name} category was not chosen for this {framework} "
        f"assessment ({always} is always in scope; other categories are chosen with the "
        "framework)"
    )


def _framework_entry(
    choice: FrameworkChoice,
    rows: list[dict[str, Any]],
    offered: Sequence[Category],
    in_scope_ids: set[str] | frozenset[str],
) -> dict[str, Any]:
    scoped = [r for r in rows if r["in_scope"]]
    linked = {c for row in scoped for c in row["controls"]}
    entry: dict[str, Any] = {
        "id": str(choice.framework.id),
        "name": choice.name,
        "version": choice.framework.version,
        "kind": choice.framework.kind,
        "catalog": catalog_reference(choice.catalog),
        "requirements": rows,
        "headings_left_out": sorted(headings(r.id for r in choice.framework.requirements)),
        "summary": {
            "requirements": len(rows),
            "requirements_in_scope": len(scoped),
            "unlinked_requirements": sum(1 for r in scoped if not r["controls"]),
            "controls": len(linked),
        },
    }
    if offered:
        entry["categories"] = [
            {
                "id": c.id,
                "name": c.name,
                "in_scope": c.id in in_scope_ids,
                "always": c.always,
                "requirements": sum(1 for r in rows if r.get("category") == c.id),
            }
            for c in offered
        ]
    return entry


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
