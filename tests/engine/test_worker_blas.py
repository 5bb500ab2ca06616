"""A worker runs numpy's BLAS in the threads its setting gives (one by default): the fleet
scales by processes, and OpenBLAS's own threads would spin against the other processes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from threadpoolctl import threadpool_limits

from orchestrator.config.settings import reset_settings
from orchestrator.runtime.blas import blas_threads, limit_on_worker_start


@pytest.fixture
def restored_blas() -> Iterator[None]:
    """Whatever the worker's start sets, the test process gets its threads back after."""
    with threadpool_limits(limits=3, user_api="blas"):
        yield


@pytest.mark.parametrize(("configured", "expected"), [(None, 1), ("2", 2)])
def test_a_worker_start_sets_the_configured_blas_threads(
    restored_blas: None, monkeypatch: pytest.MonkeyPatch, configured: str | None, expected: int
) -> None:
    if not blas_threads():
        pytest.skip("numpy was built without a BLAS library threadpoolctl can see")
    if configured is None:
        monkeypatch.delenv("LIFECYCLE_WORKER_BLAS_THREADS", raising=False)
    else:
        monkeypatch.setenv("LIFECYCLE_WORKER_BLAS_THREADS", configured)
    reset_settings()
    try:
        assert set(blas_threads()) == {3}
        limit_on_worker_start()
        assert set(blas_threads()) == {expected}
    finally:
        monkeypatch.undo()
        reset_settings()
