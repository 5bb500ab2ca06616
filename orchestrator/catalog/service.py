"""What operators and clients ask of the catalogues: list, import, diff, frameworks.

The CLI and the HTTP API call these same functions; each opens its own transaction.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from orchestrator.catalog import registry
from orchestrator.catalog.categories import categories_of, category_of
from orchestrator.catalog.importer import ImportResult, import_catalog
from orchestrator.catalog.matching import (
    FrameworkChoice,
    UnknownFramework,
    linked_requirements,
    resolve,
    suggest,
)
from orchestrator.catalog.model import CatalogInfo, LoadedCatalog
from orchestrator.contracts.errors import FleetError
from orchestrator.db.busy import retry_busy
from orchestrator.db.session import read_transaction, transaction


class CatalogLookupError(FleetError, LookupError):
    """No catalogue version or framework answers to what was asked; the message says why."""


@dataclass(frozen=True)
class CatalogSummary:
    info: CatalogInfo
    shipped: bool
    current: bool  # what a run starting now pins
    controls: int
    frameworks: int

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.info.as_dict(),
            "shipped": self.shipped,
            "current": self.current,
            "controls": self.controls,
            "frameworks": self.frameworks,
        }


@retry_busy
def list_catalogs() -> list[CatalogSummary]:
    with read_transaction() as session:
        current = set(registry.current_pins(session).values())
        out = []
        for info in registry.available(session):
            catalog = registry.load(session, info.id)
            out.append(
                CatalogSummary(
                    info=info,
                    shipped=registry.is_shipped(info),
                    current=str(info.id) in current,
                    controls=len(catalog.controls),
                    frameworks=len(catalog.frameworks),
                )
            )
        return out


def import_file(path: Path) -> ImportResult:
    with transaction() as session:
        return import_catalog(session, path)


def catalog_version(session: Session, spec: str) -> CatalogInfo:
    """The catalogue version `spec` names: by id, by "NAME VERSION", or by version alone
    when unique; CatalogLookupError, naming the known ones, when none or several match."""
    infos = registry.available(session)
    matches = [i for i in infos if spec in (str(i.id), f"{i.name} {i.version}")]
    if not matches:
        matches = [i for i in infos if i.version == spec]
    if len(matches) != 1:
        known = ", ".join(f"{i.name} {i.version} ({i.id})" for i in infos)
        why = "is ambiguous" if matches else "matches no catalogue version"
        raise CatalogLookupError(f"{spec!r} {why}; known: {known}")
    return matches[0]


@retry_busy
def find_catalog(spec: str) -> LoadedCatalog:
    """A catalogue version by id, by "NAME VERSION", or by version alone when unique."""
    with read_transaction() as session:
        return registry.load(session, catalog_version(session, spec).id)


def diff_catalogs(old_spec: str, new_spec: str) -> dict[str, Any]:
    """Controls added, removed and changed (with the fields that changed) from old to new."""
    old, new = find_catalog(old_spec), find_catalog(new_spec)
    before = {c.id: c for c in old.controls}
    after = {c.id: c for c in new.controls}
    changed = []
    for control_id in (i for i in after if i in before):
        a, b = before[control_id], after[control_id]
        fields = [
            f
            for f in ("title", "description", "domain", "domain_name")
            if getattr(a, f) != getattr(b, f)
        ]
        fields += sorted(
            k for k in {*a.details, *b.details} if a.details.get(k) != b.details.get(k)
        )
        if fields:
            changed.append({"control_id": control_id, "fields": fields})
    old_frameworks = {f.name for f in old.frameworks}
    new_frameworks = {f.name for f in new.frameworks}
    return {
        "old": old.info.as_dict(),
        "new": new.info.as_dict(),
        "added": [i for i in after if i not in before],
        "removed": [i for i in before if i not in after],
        "changed": changed,
        "frameworks_added": sorted(new_frameworks - old_frameworks),
        "frameworks_removed": sorted(old_frameworks - new_frameworks),
    }


def _framework_dict(choice: FrameworkChoice, catalogs: list[LoadedCatalog]) -> dict[str, Any]:
    framework = choice.framework
    requirements = linked_requirements(choice, catalogs)
    return {
        "id": str(framework.id),
        "name": framework.name,
        "version": framework.version,
        "kind": framework.kind,
        "aliases": list(framework.aliases),
        "catalog": {
            "id": str(choice.catalog.id),
            "name": choice.catalog.info.name,
            "version": choice.catalog.info.version,
        },
        "requirements": len(requirements),
        "linked_controls": len({c for r in requirements for c in r.control_ids}),
        "categories": [
            {"id": c.id, "name": c.name, "always_in_scope": c.always}
            for c in categories_of(framework)
        ],
    }


@retry_busy
def list_frameworks(catalog_spec: str | None = None) -> list[dict[str, Any]]:
    """The frameworks of the current catalogue versions (or of one version)."""
    with read_transaction() as session:
        catalogs = registry.pinned(session, None)
    if catalog_spec is not None:
        chosen = find_catalog(catalog_spec)
        scf = [c for c in catalogs if c.info.kind == "scf_workbook" and c.id != chosen.id]
        catalogs = [chosen, *scf]
        owners = [chosen]
    else:
        owners = catalogs
    return [_framework_dict(FrameworkChoice(f, c), catalogs) for c in owners for f in c.frameworks]


@retry_busy
def find_framework(spec: str) -> tuple[FrameworkChoice, list[LoadedCatalog]]:
    """A framework by id (any stored version) or by name (in the current versions)."""
    with read_transaction() as session:
        catalogs = registry.pinned(session, None)
        try:
            wanted = uuid.UUID(spec)
        except ValueError:
            wanted = None
        if wanted is not None:
            for info in registry.available(session):
                catalog = registry.load(session, info.id)
                for framework in catalog.frameworks:
                    if framework.id == wanted:
                        scf = [c for c in catalogs if c.info.kind == "scf_workbook"]
                        return FrameworkChoice(framework, catalog), [catalog, *scf]
            raise CatalogLookupError(f"no framework has id {spec}")
    choice = resolve(catalogs, spec)
    if choice is None:
        names = sorted({f.name for c in catalogs for f in c.frameworks}, key=str.lower)
        raise UnknownFramework([spec], names, {spec: suggest(catalogs, spec)})
    return choice, catalogs


def show_framework(spec: str) -> dict[str, Any]:
    """A framework with every requirement and its linked SCF controls."""
    choice, catalogs = find_framework(spec)
    requirements = linked_requirements(choice, catalogs)
    offered = categories_of(choice.framework)
    return {
        **_framework_dict(choice, catalogs),
        "items": [
            {
                "requirement_id": r.id,
                "title": r.title,
                "controls": list(r.control_ids),
                "category": getattr(category_of(offered, r.id), "id", None),
            }
            for r in requirements
        ],
    }
