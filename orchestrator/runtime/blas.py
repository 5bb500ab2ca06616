"""Numpy's BLAS threads in a worker process (LIFECYCLE_WORKER_BLAS_THREADS, one by default).

A fleet runs one job process per core. OpenBLAS starts a thread per core in each of them,
and on small products (a requirement's facets against a few hundred passages) those
threads spin waiting for each other while the other processes hold the cores. Set when
the worker starts (before the prefork pool forks: its children inherit it), for the whole
process, the embedded default's in-process worker included."""

from __future__ import annotations

import logging
from typing import Any

import numpy  # noqa: F401 (loads the BLAS library the limit applies to)
from celery.signals import worker_init, worker_ready
from threadpoolctl import threadpool_info, threadpool_limits

from orchestrator.config.settings import get_settings

log = logging.getLogger(__name__)


def blas_threads() -> list[int]:
    """The threads of each BLAS library loaded in this process."""
    return [int(pool["num_threads"]) for pool in threadpool_info() if pool["user_api"] == "blas"]


@worker_init.connect
def limit_on_worker_start(**_: Any) -> None:
    """For the rest of the process: called, not entered, so nothing restores it."""
    threadpool_limits(limits=get_settings().worker_blas_threads, user_api="blas")


@worker_ready.connect
def _log_threads(**_: Any) -> None:
    log.info("numpy's BLAS threads", extra={"blas_threads": blas_threads()})
