"""Catalogue versions in the database: save once (idempotent), read back whole.

Saving a version that is already stored changes nothing. The same name and version from a
different file is refused: a release is immutable, a changed file is a new version.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, insert, select
from sqlalchemy.orm import Session

from orchestrator.catalog.model import (
    CatalogControl,
    CatalogInfo,
    Framework,
    LoadedCatalog,
    Requirement,
)
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import FleetError
from orchestrator.db.catalog_models import (
    CatalogControlRow,
    CatalogRow,
    FrameworkRequirementRow,
    FrameworkRow,
    RequirementLinkRow,
)

CATALOGS: Table = CatalogRow.__table__  # type: ignore[assignment]
CONTROLS: Table = CatalogControlRow.__table__  # type: ignore[assignment]
FRAMEWORKS: Table = FrameworkRow.__table__  # type: ignore[assignment]
REQUIREMENTS: Table = FrameworkRequirementRow.__table__  # type: ignore[assignment]
LINKS: Table = RequirementLinkRow.__table__  # type: ignore[assignment]
_BATCH = 5000


class CatalogConflict(FleetError, ValueError):
    """The same catalogue name and version is stored already, from a different file."""


@dataclass(frozen=True)
class Saved:
    info: CatalogInfo
    created: bool


def save_catalog(session: Session, catalog: LoadedCatalog) -> Saved:
    info = catalog.info
    existing = session.execute(
        select(CATALOGS.c.id, CATALOGS.c.sha256).where(
            CATALOGS.c.name == info.name, CATALOGS.c.version == info.version
        )
    ).first()
    if existing is not None:
        if existing.sha256 != info.sha256:
            raise CatalogConflict(
                f"{info.name} {info.version} is already imported from a different file "
                f"(sha256 {existing.sha256[:12]}…, this file {info.sha256[:12]}…); a changed "
                "catalogue must carry a new version"
            )
        return Saved(info=info, created=False)
    session.execute(
        insert(CATALOGS),
        [
            {
                "id": info.id,
                "kind": info.kind,
                "name": info.name,
                "version": info.version,
                "source_name": info.source_name,
                "sha256": info.sha256,
                "licence": info.licence,
                "attribution": info.attribution,
                "details": dict(catalog.details),
                "imported_at": utcnow(),
            }
        ],
    )
    _insert(
        session,
        CONTROLS,
        [
            {
                "catalog_id": info.id,
                "control_id": c.id,
                "position": i,
                "domain": c.domain,
                "domain_name": c.domain_name,
                "title": c.title,
                "description": c.description,
                "details": dict(c.details),
            }
            for i, c in enumerate(catalog.controls)
        ],
    )
    _insert(
        session,
        FRAMEWORKS,
        [
            {
                "id": f.id,
                "catalog_id": info.id,
                "name": f.name,
                "version": f.version,
                "kind": f.kind,
                "crosswalk": f.crosswalk,
                "position": i,
                "details": dict(f.details),
            }
            for i, f in enumerate(catalog.frameworks)
        ],
    )
    _insert(
        session,
        REQUIREMENTS,
        [
            {"framework_id": f.id, "requirement_id": r.id, "position": i, "title": r.title}
            for f in catalog.frameworks
            for i, r in enumerate(f.requirements)
        ],
    )
    _insert(
        session,
        LINKS,
        [
            {"framework_id": f.id, "requirement_id": r.id, "control_id": c}
            for f in catalog.frameworks
            for r in f.requirements
            for c in r.control_ids
        ],
    )
    return Saved(info=info, created=True)


def _insert(session: Session, table: Table, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), _BATCH):
        session.execute(insert(table), rows[start : start + _BATCH])


def stored_infos(session: Session) -> list[CatalogInfo]:
    rows = session.execute(select(CATALOGS).order_by(CATALOGS.c.name, CATALOGS.c.imported_at))
    return [_info(row) for row in rows]


def _info(row: Any) -> CatalogInfo:
    return CatalogInfo(
        id=row.id,
        kind=row.kind,
        name=row.name,
        version=row.version,
        source_name=row.source_name,
        sha256=row.sha256,
        licence=row.licence,
        attribution=row.attribution,
    )


def read_catalog(session: Session, catalog_id: uuid.UUID) -> LoadedCatalog | None:
    row = session.execute(select(CATALOGS).where(CATALOGS.c.id == catalog_id)).first()
    if row is None:
        return None
    controls = tuple(
        CatalogControl(
            id=c.control_id,
            domain=c.domain,
            domain_name=c.domain_name,
            title=c.title,
            description=c.description,
            details=c.details,
        )
        for c in session.execute(
            select(CONTROLS)
            .where(CONTROLS.c.catalog_id == catalog_id)
            .order_by(CONTROLS.c.position)
        )
    )
    framework_rows = list(
        session.execute(
            select(FRAMEWORKS)
            .where(FRAMEWORKS.c.catalog_id == catalog_id)
            .order_by(FRAMEWORKS.c.position)
        )
    )
    ids = [f.id for f in framework_rows]
    links: dict[tuple[uuid.UUID, str], list[str]] = {}
    requirements: dict[uuid.UUID, list[tuple[str, str]]] = {i: [] for i in ids}
    if ids:
        for link in session.execute(select(LINKS).where(LINKS.c.framework_id.in_(ids))):
            links.setdefault((link.framework_id, link.requirement_id), []).append(link.control_id)
        for req in session.execute(
            select(REQUIREMENTS)
            .where(REQUIREMENTS.c.framework_id.in_(ids))
            .order_by(REQUIREMENTS.c.position)
        ):
            requirements[req.framework_id].append((req.requirement_id, req.title))
    order = {c.id: i for i, c in enumerate(controls)}
    frameworks = tuple(
        Framework(
            id=f.id,
            catalog_id=catalog_id,
            name=f.name,
            version=f.version,
            kind=f.kind,
            crosswalk=f.crosswalk,
            details=f.details,
            requirements=tuple(
                Requirement(
                    id=rid,
                    title=title,
                    control_ids=tuple(
                        sorted(links.get((f.id, rid), []), key=lambda c: order.get(c, 0))
                    ),
                )
                for rid, title in requirements[f.id]
            ),
        )
        for f in framework_rows
    )
    return LoadedCatalog(
        info=_info(row), controls=controls, frameworks=frameworks, details=row.details
    )
