"""The console on the embedded default: a fresh database per test, no worker (`client`),
or one database per module with a real in-process worker (`running`). The database is
PostgreSQL's where the integration tier has a server (CI), SQLite's otherwise: the
console's write paths run on PostgreSQL in production."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from orchestrator.api import app
from orchestrator.config.settings import reset_settings
from tests.support.embedded import embedded_on_postgres, with_a_worker


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with embedded_on_postgres(monkeypatch, tmp_path) as home:
        yield home


@pytest.fixture
def client(embedded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
    reset_settings()
    yield TestClient(app)
    reset_settings()


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One environment for the module, with a worker in this process."""
    with with_a_worker(tmp_path_factory.mktemp("console")) as client:
        yield client
