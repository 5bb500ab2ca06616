"""Continuous assessment tests use the HTTP API's fixtures, on PostgreSQL where the
integration tier has a server (CI): reassessments and evidence requests write there in
production."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.conftest import Api, api
from tests.support.embedded import embedded_on_postgres, with_a_worker

__all__ = ["api", "embedded", "running_api"]


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with embedded_on_postgres(monkeypatch, tmp_path) as home:
        yield home


@pytest.fixture(scope="module")
def running_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """One environment for the module, with a worker in this process."""
    with with_a_worker(tmp_path_factory.mktemp("running-api")) as client:
        yield Api(client)
