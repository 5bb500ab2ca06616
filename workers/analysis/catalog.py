"""The shipped SCF control catalogue and the frameworks it can be scoped to."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

CATALOG_FILE = "scf_controls.json"


@dataclass(frozen=True)
class Control:
    id: str
    domain: str
    domain_name: str
    title: str
    description: str
    keywords: tuple[str, ...]

    @property
    def search_query(self) -> str:
        return " ".join((self.title, *self.keywords))

    def header(self) -> dict[str, str]:
        """The fields every artifact repeats for a control."""
        return {"control_id": self.id, "domain": self.domain, "domain_name": self.domain_name,
                "title": self.title}


@dataclass(frozen=True)
class Catalog:
    controls: tuple[Control, ...]
    domains: dict[str, str]
    frameworks: dict[str, tuple[str, ...]]

    def control(self, control_id: str) -> Control | None:
        return next((c for c in self.controls if c.id == control_id), None)

    def framework(self, name: str) -> tuple[str, tuple[str, ...]] | None:
        """(canonical name, domains in play) for a framework; None if unknown.

        Matched loosely: case, spaces and punctuation are ignored, and an edition or
        type suffix is allowed ("ISO/IEC 27001:2022", "SCF 2024.2", "SOC 2 Type II").
        """
        wanted = _key(name)
        matches = [n for n in self.frameworks if wanted.startswith(_key(n))]
        if not matches:
            return None
        best = max(matches, key=lambda n: len(_key(n)))
        return best, self.frameworks[best]


def _key(name: str) -> str:
    key = "".join(ch for ch in name.lower() if ch.isalnum())
    return key.replace("isoiec", "iso", 1)  # "ISO/IEC 27001" is "ISO 27001"


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    raw: dict[str, Any] = json.loads(
        files("workers.analysis").joinpath(CATALOG_FILE).read_text(encoding="utf-8"))
    domains: dict[str, str] = raw["domains"]
    controls = tuple(
        Control(id=c["id"], domain=c["domain"], domain_name=domains[c["domain"]],
                title=c["title"], description=c["description"], keywords=tuple(c["keywords"]))
        for c in raw["controls"])
    frameworks = {name: tuple(codes) for name, codes in raw["frameworks"].items()}
    return Catalog(controls=controls, domains=domains, frameworks=frameworks)


def supported_frameworks() -> list[str]:
    return list(load_catalog().frameworks)
