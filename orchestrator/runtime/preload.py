"""A job worker loads, before it takes work, what its first job would otherwise load: the
shipped SCF catalogue (seconds to read from its workbook) and the embedding model. A worker
added to a busy queue then does not make the job it takes wait for it, and the prefork
pool's children share what the parent loaded (this runs before the pool forks)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from celery.signals import worker_init, worker_ready

from orchestrator.catalog.registry import shipped_catalog
from orchestrator.config.settings import get_settings
from orchestrator.engine.routing import ROUTES
from orchestrator.knowledge.embedder import default_embedder

log = logging.getLogger(__name__)
JOB_QUEUES = frozenset(route.queue for route in ROUTES.values())


def preload(queues: Iterable[str] | None) -> float | None:
    """Load what jobs share when these queues (None: every queue) include a job queue;
    the seconds it took, or None when there was nothing to load."""
    if queues is not None and not JOB_QUEUES & set(queues):
        return None
    started = time.perf_counter()
    shipped_catalog()
    default_embedder().embed(["preload"])  # a lazy model loads its weights on first use
    return time.perf_counter() - started


#: What the preload did, logged once the worker's logging is set up (after worker_init).
_outcome: dict[str, Any] = {}


@worker_init.connect
def _preload_before_work(sender: Any = None, **_: Any) -> None:
    if not get_settings().worker_preload:
        return
    selected = getattr(getattr(sender, "app", None), "amqp", None)
    consume_from = getattr(getattr(selected, "queues", None), "consume_from", None)
    try:
        _outcome["seconds"] = preload(list(consume_from) if consume_from else None)
    except Exception as error:  # the first job loads it then, and reports what fails
        _outcome["error"] = f"{type(error).__name__}: {error}"


@worker_ready.connect
def _log_preload(**_: Any) -> None:
    if "error" in _outcome:
        log.warning("could not preload the catalogue and the model: %s", _outcome["error"])
    elif _outcome.get("seconds") is not None:
        seconds = round(float(_outcome["seconds"]), 2)
        log.info("preloaded the catalogue and the model", extra={"seconds": seconds})
