"""A worker of a job queue loads the shipped catalogue and the embedding model before it
takes work (a fresh worker's first job would otherwise wait seconds for them); a
coordinator-only worker loads nothing it does not use. Every worker runs numpy's BLAS in
one thread (orchestrator.runtime.blas)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from orchestrator.catalog.registry import shipped_catalog
from orchestrator.runtime.preload import preload
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.polling import wait_for

PRELOADED = "preloaded the catalogue and the model"
BLAS = "numpy's BLAS threads"


def test_only_a_worker_of_a_job_queue_preloads() -> None:
    shipped_catalog.cache_clear()
    assert preload(["orchestrator", "notifications"]) is None
    assert shipped_catalog.cache_info().currsize == 0
    seconds = preload(["orchestrator", "analysis"])
    assert seconds is not None and seconds > 0
    assert shipped_catalog.cache_info().currsize == 1


def _logged(log: str, message: str) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("message") == message]


def _preloaded(log: str) -> list[dict[str, object]]:
    return _logged(log, PRELOADED)


def _ready_line(fleet: Fleet, name: str) -> Callable[[], bool]:
    return lambda: "ready." in fleet.log_of(name)


@pytest.mark.parametrize("pool", ["solo", "prefork"])
def test_a_job_worker_has_preloaded_when_it_first_answers(fleet: Fleet, pool: str) -> None:
    on = {"LIFECYCLE_WORKER_PRELOAD": "true"}
    job_worker = fleet.start("analysis,kb_index", pool=pool, concurrency=1, extra_env=on)
    coordinator = fleet.start("orchestrator", extra_env=on)
    off = fleet.start("analysis", pool=pool, concurrency=1)  # the tests' default: off

    # Loaded before the consumer started; logged once logging is set up, at "ready".
    for name in (job_worker, coordinator, off):
        wait_for(_ready_line(fleet, name), what=f"{name}'s ready line")
    [line] = _preloaded(fleet.log_of(job_worker))
    assert float(str(line["seconds"])) > 0
    assert _preloaded(fleet.log_of(coordinator)) == []
    assert _preloaded(fleet.log_of(off)) == []
    # The default, one thread, whatever the cores (OpenBLAS would start one per core).
    for name in (job_worker, coordinator, off):
        [threads] = _logged(fleet.log_of(name), BLAS)
        assert threads["blas_threads"] == [1], name
