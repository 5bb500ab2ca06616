"""A catalogue version in memory: the same shape whether read from a file or the database.

Ids are derived, never random: a catalogue's id comes from its name, version and file
checksum, a framework's from its catalogue and name. So the shipped workbook and an import
of the same file have the same ids, and a run's pin means the same thing everywhere.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_NAMESPACE = uuid.UUID("5b0c7e52-3f0a-4d55-9a53-3c2f1c1e8d10")

SCF_NAME = "Secure Controls Framework (SCF)"
SCF_LICENCE = "CC BY-ND 4.0"
SCF_ATTRIBUTION = (
    "Secure Controls Framework (SCF), CC BY-ND 4.0. Control text is reproduced "
    "verbatim from the official SCF workbook, https://securecontrolsframework.com"
)


def catalog_id_for(name: str, version: str, sha256: str) -> uuid.UUID:
    return uuid.uuid5(_NAMESPACE, f"catalog\n{name}\n{version}\n{sha256}")


def framework_id_for(catalog_id: uuid.UUID, name: str) -> uuid.UUID:
    return uuid.uuid5(_NAMESPACE, f"framework\n{catalog_id}\n{name}")


def version_key(version: str) -> tuple[int, ...]:
    """ "2022.3" < "2022.10" < "2023.1"; "5.0.1" < "5.1.1"."""
    return tuple(int(n) for n in re.findall(r"\d+", version))


@dataclass(frozen=True)
class CatalogInfo:
    id: uuid.UUID
    kind: str  # scf_workbook, oscal_catalog, oscal_profile
    name: str
    version: str
    source_name: str
    sha256: str
    licence: str
    attribution: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "kind": self.kind,
            "name": self.name,
            "version": self.version,
            "source_name": self.source_name,
            "sha256": self.sha256,
            "licence": self.licence,
            "attribution": self.attribution,
        }


@dataclass(frozen=True)
class CatalogControl:
    id: str
    domain: str
    domain_name: str
    title: str
    description: str
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def search_query(self) -> str:
        """What the knowledge base is searched with: the control's name, verbatim."""
        return self.title

    def header(self) -> dict[str, str]:
        """The fields every artifact repeats for a control."""
        return {
            "control_id": self.id,
            "domain": self.domain,
            "domain_name": self.domain_name,
            "title": self.title,
        }


@dataclass(frozen=True)
class Requirement:
    id: str  # as the framework writes it: "CC6.1", "A.5.1", "5.1(a)", "AC-2(1)"
    title: str  # a short title where the source gives one, else ""
    control_ids: tuple[str, ...]  # linked SCF controls (empty for crosswalked frameworks)


@dataclass(frozen=True)
class Framework:
    id: uuid.UUID
    catalog_id: uuid.UUID
    name: str
    version: str
    kind: str  # scf (the whole catalogue), scf_mapping, oscal_catalog, oscal_profile
    requirements: tuple[Requirement, ...]
    crosswalk: str | None = None  # SCF framework whose links these requirement ids use
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def aliases(self) -> tuple[str, ...]:
        return tuple(self.details.get("aliases", ()))


@dataclass(frozen=True)
class LoadedCatalog:
    info: CatalogInfo
    controls: tuple[CatalogControl, ...]
    frameworks: tuple[Framework, ...]
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> uuid.UUID:
        return self.info.id

    def control(self, control_id: str) -> CatalogControl | None:
        return self._controls.get(control_id)

    @property
    def _controls(self) -> dict[str, CatalogControl]:
        cached = self.__dict__.get("_by_id")
        if cached is None:
            cached = {c.id: c for c in self.controls}
            object.__setattr__(self, "_by_id", cached)
        return cached

    def framework(self, name: str) -> Framework | None:
        return next((f for f in self.frameworks if f.name == name), None)

    @property
    def domains(self) -> dict[str, str]:
        return {c.domain: c.domain_name for c in self.controls}
