"""The console on the embedded default: a fresh SQLite database per test, no worker
(`client`), or one database per module with a real in-process worker (`running`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from orchestrator.api import app
from orchestrator.config.settings import reset_settings
from orchestrator.db.migrate import upgrade
from orchestrator.engine.messages import get_app
from orchestrator.runtime.embedded import embedded_worker
from orchestrator.testing.reset import reset_process_state
from tests.support.embedded import LIFECYCLE_VARS


@pytest.fixture
def client(embedded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
    reset_settings()
    yield TestClient(app)
    reset_settings()


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One embedded environment for the module, with a worker in this process."""
    with pytest.MonkeyPatch.context() as patch:
        for name in LIFECYCLE_VARS:
            patch.delenv(name, raising=False)
        patch.setenv("LIFECYCLE_HOME", str(tmp_path_factory.mktemp("console")))
        patch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
        reset_process_state()
        reset_settings()
        upgrade()
        with embedded_worker(get_app(), concurrency=3):
            yield TestClient(app)
        reset_process_state()
        reset_settings()
