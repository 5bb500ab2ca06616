"""The frameworks a run may select, as a person chooses among them: every framework of
the catalogues the run pinned, with its requirement count and the categories chosen with
it (SOC 2: Security always, the others by choice)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from orchestrator.catalog import registry
from orchestrator.catalog.categories import categories_of
from orchestrator.catalog.matching import FrameworkChoice, linked_requirements
from orchestrator.contracts.identity import Actor
from orchestrator.db.busy import retry_busy
from orchestrator.db.session import read_transaction
from orchestrator.service.producer import load_run


@dataclass(frozen=True)
class CategoryOption:
    id: str
    name: str
    always: bool


@dataclass(frozen=True)
class FrameworkOption:
    name: str
    aliases: tuple[str, ...]
    catalog: str
    requirements: int
    categories: tuple[CategoryOption, ...]


@retry_busy
def framework_options(actor: Actor, run_id: uuid.UUID) -> list[FrameworkOption]:
    """Sorted by name, case aside; one entry per name (a framework read from its own
    catalogue wins over a crosswalk column of the same name, as the selection does)."""
    with read_transaction() as session:
        run = load_run(session, actor, run_id)
        pins = (run.context or {}).get("catalogs") or None
        catalogs = registry.pinned(session, pins)
    found: dict[str, FrameworkOption] = {}
    for catalog in catalogs:
        for framework in catalog.frameworks:
            option = FrameworkOption(
                name=framework.name,
                aliases=tuple(framework.aliases),
                catalog=catalog.info.name,
                requirements=len(
                    linked_requirements(FrameworkChoice(framework, catalog), catalogs)
                ),
                categories=tuple(
                    CategoryOption(c.id, c.name, c.always) for c in categories_of(framework)
                ),
            )
            if framework.kind.startswith("oscal") or option.name not in found:
                found[option.name] = option
    return sorted(found.values(), key=lambda o: o.name.lower())
