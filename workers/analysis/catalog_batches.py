"""The catalogue's control texts embedded in batches: the first analysis job on a catalogue
version and model finds their vectors missing (a minute for SCF with the model on one
core) and offers the missing controls' texts, longest first, in batches of as many texts as
LIFECYCLE_JOB_BATCH_CONTROLS controls have, to every analysis worker
(orchestrator.jobs.batches). Each batch keeps its vectors in a part file
beside the kept ones (`CatalogVectors.keep_part`); the job's next read merges them. The
vectors do not depend on which workers took part: the batches are planned once, in
`CatalogVectors.text_items`' order, and a batch's texts are embedded together whoever takes
it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.db.session import read_transaction
from orchestrator.engine.routing import ROUTES
from orchestrator.jobs import batches
from orchestrator.jobs.interface import JobContext
from orchestrator.knowledge.embedder import Embedder, default_embedder
from workers.analysis.catalog import run_scf_catalog
from workers.analysis.requirement_query import CACHE_DIR, CatalogVectors

CATALOG_BATCH_TASK = "analysis.embed_catalog_batch"
#: The catalogue's batches of a job, planned apart from any other fan-out of the same job.
KEY_SUFFIX = ":catalog"


def embed_catalog_in_batches(request: JobRequest, cache: CatalogVectors) -> None:
    """Offer the controls whose vectors the cache lacks to the analysis workers, take
    batches here too, and wait for the rest within the job's deadline."""
    missing = cache.missing(control.id for control in cache.catalog.controls)
    if not missing:
        return
    offer = (
        CATALOG_BATCH_TASK,
        ROUTES[JobKind.ANALYSIS].queue,
        {"request": request.model_dump(mode="json")},
    )
    # Batches of texts of about one length (the model pads each to its longest), as many
    # texts each as the setting's controls have on average.
    items = cache.text_items(missing)
    per_batch = max(1, round(get_settings().job_batch_controls * len(items) / len(missing)))
    size = batches.spread(len(items), per_batch)
    batches.fan_out(
        request, items, size, offer, catalog_work(cache), key=request.job_id + KEY_SUFFIX
    )


def catalog_work(cache: CatalogVectors) -> batches.Work:
    def work(items: list[str]) -> Callable[[Session], None]:
        cache.keep_part(items)
        return lambda session: None  # the vectors are in storage; the mark is the batch's

    return work


def catalog_vectors_for(request: JobRequest, embedder: Embedder) -> CatalogVectors:
    """The kept vectors of the run's pinned catalogue, for this model."""
    storage = get_settings().resolved_storage_dir
    with read_transaction() as session:
        context = JobContext(request=request, session=session, storage_dir=storage)
        catalog = run_scf_catalog(context)
    return CatalogVectors(catalog, embedder, storage / CACHE_DIR)


def embed_one_batch(body: dict[str, Any]) -> str:
    """An analysis worker's share: embed one batch of the catalogue if nobody holds it."""
    claimed = batches.claim(str(body["batch_id"]))
    if claimed is None:
        return "taken"
    request = JobRequest.model_validate(body["request"])
    cache = catalog_vectors_for(request, default_embedder())
    ok = batches.run_claimed(claimed, catalog_work(cache))
    return "succeeded" if ok else "failed"
