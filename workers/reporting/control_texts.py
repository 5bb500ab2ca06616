"""What the assessment plan's activities examine, in the catalogue's own words: per SCF
control its name, its control question, the practices its methods to comply name (lines
naming a vendor product left out, as recommendations leave them: method_steps.py) and the
artifacts its Evidence Request List entries name, verbatim from the run's pinned SCF
catalogue."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from orchestrator.catalog.model import LoadedCatalog
from workers.analysis.method_steps import evidence_artifacts, generic_methods


def control_texts(catalog: LoadedCatalog, control_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """SCF control id -> its texts; an id the catalogue lacks is left out."""
    found: dict[str, dict[str, Any]] = {}
    for control_id in dict.fromkeys(control_ids):
        control = catalog.control(control_id)
        if control is None:
            continue
        found[control_id] = {
            "name": control.title,
            "question": str(control.details.get("question") or ""),
            "practices": generic_methods(catalog, control),
            "evidence_artifacts": evidence_artifacts(catalog, control_id),
        }
    return found
