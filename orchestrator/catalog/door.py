"""Framework choices checked when they arrive, against the catalogues the run pinned."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.orm import Session

from orchestrator.catalog import registry
from orchestrator.catalog.categories import chosen
from orchestrator.catalog.matching import FrameworkChoice, available_names, resolve_many


def check_selection(
    session: Session, run_context: Mapping[str, Any] | None, names: tuple[str, ...]
) -> list[FrameworkChoice]:
    """The frameworks named, resolved in the run's pinned catalogues (the current ones
    for a run that pinned none). Raises UnknownFramework listing what is available."""
    pins = (run_context or {}).get("catalogs") or None
    return resolve_many(registry.pinned(session, pins), names)


def check_categories(
    session: Session,
    run_context: Mapping[str, Any] | None,
    names: tuple[str, ...],
    selection: Mapping[str, tuple[str, ...]],
) -> dict[str, frozenset[str]]:
    """The categories in scope per selected framework; raises UnknownCategory (or
    UnknownFramework) naming what is available."""
    pins = (run_context or {}).get("catalogs") or None
    catalogs = registry.pinned(session, pins)
    return chosen(selection, resolve_many(catalogs, names), catalogs)


def selectable_names(session: Session, run_context: Mapping[str, Any] | None) -> list[str]:
    """The framework names a run may select: those of the catalogues it pinned."""
    pins = (run_context or {}).get("catalogs") or None
    return available_names(registry.pinned(session, pins))
