"""`catalog import FILE`: an SCF workbook (.xlsx) or an OSCAL catalog/profile (.json).

Importing a file that is already imported changes nothing (same name, version and
checksum); a newer release is a new version beside the old one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.orm import Session

from orchestrator.catalog import registry
from orchestrator.catalog.model import CatalogInfo, LoadedCatalog
from orchestrator.catalog.oscal import catalog_from_oscal, oscal_kind, profile_from_oscal
from orchestrator.catalog.scf_frameworks import catalog_from_workbook
from orchestrator.catalog.scf_workbook import read_scf_workbook
from orchestrator.catalog.store import save_catalog, stored_infos
from orchestrator.contracts.errors import FleetError


class CatalogFileError(FleetError, ValueError):
    """The file cannot be imported; the message says why."""


@dataclass(frozen=True)
class ImportResult:
    info: CatalogInfo
    created: bool
    controls: int
    frameworks: int
    requirements: int
    links: int


def read_catalog_file(session: Session, path: Path) -> LoadedCatalog:
    """The file as a catalogue version, not yet stored."""
    if not path.is_file():
        raise CatalogFileError(f"{path}: no such file")
    sha256 = registry.file_sha256(path)
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xlsm"):
        return catalog_from_workbook(read_scf_workbook(path), sha256=sha256, source_name=path.name)
    if suffix == ".json":
        if oscal_kind(path) == "catalog":
            return catalog_from_oscal(path, sha256=sha256)
        bases = [
            registry.load(session, info.id)
            for info in registry.available(session)
            if info.kind == "oscal_catalog"
        ]
        return profile_from_oscal(path, sha256=sha256, catalogs=bases)
    raise CatalogFileError(
        f"{path}: expected an SCF workbook (.xlsx) or an OSCAL catalog or profile (.json)"
    )


def import_catalog(session: Session, path: Path) -> ImportResult:
    if path.is_file():
        # The same file again: nothing to read, nothing to change.
        sha256 = registry.file_sha256(path)
        same = next((i for i in stored_infos(session) if i.sha256 == sha256), None)
        if same is not None:
            return _result(registry.load(session, same.id), created=False)
    catalog = read_catalog_file(session, path)
    saved = save_catalog(session, catalog)
    return _result(catalog, created=saved.created)


def _result(catalog: LoadedCatalog, *, created: bool) -> ImportResult:
    return ImportResult(
        info=catalog.info,
        created=created,
        controls=len(catalog.controls),
        frameworks=len(catalog.frameworks),
        requirements=sum(len(f.requirements) for f in catalog.frameworks),
        links=sum(len(r.control_ids) for f in catalog.frameworks for r in f.requirements),
    )
