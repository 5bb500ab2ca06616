"""The catalogue versions a job works with: those its run pinned when it started."""

from __future__ import annotations

from orchestrator.catalog import registry
from orchestrator.catalog.matching import scf_catalog
from orchestrator.catalog.model import LoadedCatalog
from orchestrator.jobs.interface import JobContext, JobFailure


def run_catalogs(context: JobContext) -> list[LoadedCatalog]:
    pins = context.request.parameters.get("catalogs")
    try:
        return registry.pinned(context.session, pins if isinstance(pins, dict) else None)
    except registry.CatalogNotFound as error:
        # A pinned version was deleted from this database: retrying cannot bring it back.
        raise JobFailure("catalog_missing", str(error)) from error


def run_scf_catalog(context: JobContext) -> LoadedCatalog:
    catalog = scf_catalog(run_catalogs(context))
    if catalog is None:
        raise JobFailure("catalog_missing", "the run pinned no SCF catalogue")
    return catalog
