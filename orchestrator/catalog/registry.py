"""Which catalogue versions exist, which ones a new run pins, and loading one by id.

The official SCF workbook ships with the package, so a fresh install has a real catalogue
without an import step; imported versions live in the database. A run pins the newest
version of each catalogue when it starts and keeps those ids for its whole life.
"""

from __future__ import annotations

import hashlib
import re
import threading
import uuid
from collections.abc import Mapping
from functools import lru_cache
from importlib.resources import as_file, files
from pathlib import Path

from sqlalchemy.orm import Session

from orchestrator.catalog.model import (
    SCF_ATTRIBUTION,
    SCF_LICENCE,
    SCF_NAME,
    CatalogInfo,
    LoadedCatalog,
    catalog_id_for,
    version_key,
)
from orchestrator.catalog.scf_frameworks import catalog_from_workbook
from orchestrator.catalog.scf_workbook import read_scf_workbook
from orchestrator.catalog.store import read_catalog, stored_infos
from orchestrator.contracts.errors import FleetError

SHIPPED_WORKBOOK = "SCF_2022.3.xlsx"

Pins = Mapping[str, str]
"""A run's catalogue pins: catalogue name -> catalogue version id."""


class CatalogNotFound(FleetError, LookupError):
    """A pinned catalogue version is neither shipped nor in this database."""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@lru_cache(maxsize=1)
def shipped_path() -> Path:
    with as_file(files("orchestrator.catalog").joinpath("data", SHIPPED_WORKBOOK)) as path:
        return Path(path)


@lru_cache(maxsize=1)
def shipped_info() -> CatalogInfo:
    """The shipped workbook's identity, without reading it (the release is in its name)."""
    match = re.search(r"(\d{4}\.\d+)", SHIPPED_WORKBOOK)
    assert match is not None
    sha256 = file_sha256(shipped_path())
    release = match.group(1)
    return CatalogInfo(
        id=catalog_id_for(SCF_NAME, release, sha256),
        kind="scf_workbook",
        name=SCF_NAME,
        version=release,
        source_name=SHIPPED_WORKBOOK,
        sha256=sha256,
        licence=SCF_LICENCE,
        attribution=SCF_ATTRIBUTION,
    )


@lru_cache(maxsize=1)
def shipped_catalog() -> LoadedCatalog:
    path = shipped_path()
    return catalog_from_workbook(
        read_scf_workbook(path), sha256=shipped_info().sha256, source_name=SHIPPED_WORKBOOK
    )


def available(session: Session) -> list[CatalogInfo]:
    """Every catalogue version this installation knows: the shipped one and the imported."""
    infos = stored_infos(session)
    shipped = shipped_info()
    if all(info.id != shipped.id for info in infos):
        infos.insert(0, shipped)
    return infos


def is_shipped(info: CatalogInfo) -> bool:
    return info.id == shipped_info().id


def current_pins(session: Session) -> dict[str, str]:
    """What a run starting now pins: the newest version of each catalogue."""
    newest: dict[str, CatalogInfo] = {}
    for info in available(session):
        held = newest.get(info.name)
        if held is None or version_key(info.version) > version_key(held.version):
            newest[info.name] = info
    return {name: str(info.id) for name, info in sorted(newest.items())}


_loaded: dict[uuid.UUID, LoadedCatalog] = {}
_lock = threading.Lock()


def load(session: Session, catalog_id: uuid.UUID | str) -> LoadedCatalog:
    """One catalogue version, whole; cached per process (a version never changes)."""
    key = uuid.UUID(str(catalog_id))
    with _lock:
        cached = _loaded.get(key)
    if cached is not None:
        return cached
    catalog = read_catalog(session, key)
    if catalog is None:
        if key != shipped_info().id:
            raise CatalogNotFound(f"catalogue version {key} is neither shipped nor imported")
        catalog = shipped_catalog()
    with _lock:
        _loaded[key] = catalog
    return catalog


def pinned(session: Session, pins: Pins | None) -> list[LoadedCatalog]:
    """The catalogues a run pinned (or, for a run that pinned nothing, the current ones)."""
    chosen = dict(pins) if pins else current_pins(session)
    return [load(session, catalog_id) for _, catalog_id in sorted(chosen.items())]


def forget_loaded() -> None:
    """Drop the per-process cache (tests that switch databases)."""
    with _lock:
        _loaded.clear()
