"""Framework choices checked when they arrive, against the catalogues the run pinned."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.orm import Session

from orchestrator.catalog import registry
from orchestrator.catalog.matching import FrameworkChoice, resolve_many


def check_selection(
    session: Session, run_context: Mapping[str, Any] | None, names: tuple[str, ...]
) -> list[FrameworkChoice]:
    """The frameworks named, resolved in the run's pinned catalogues (the current ones
    for a run that pinned none). Raises UnknownFramework listing what is available."""
    pins = (run_context or {}).get("catalogs") or None
    return resolve_many(registry.pinned(session, pins), names)
