"""The console on the embedded default: a fresh SQLite database per test, no worker
(`console`), or one database per module with a real in-process worker (`running`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from orchestrator.api import app
from orchestrator.api.config import get_api_settings
from orchestrator.console.settings import get_console_settings
from orchestrator.db.migrate import upgrade
from orchestrator.embedded import embedded_worker
from orchestrator.fleet import get_app
from orchestrator.reset import reset_process_state
from tests.conftest import _LIFECYCLE_VARS


@pytest.fixture
def client(embedded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
    get_api_settings.cache_clear()
    get_console_settings.cache_clear()
    yield TestClient(app)
    get_api_settings.cache_clear()
    get_console_settings.cache_clear()


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One embedded environment for the module, with a worker in this process."""
    with pytest.MonkeyPatch.context() as patch:
        for name in _LIFECYCLE_VARS:
            patch.delenv(name, raising=False)
        patch.setenv("LIFECYCLE_HOME", str(tmp_path_factory.mktemp("console")))
        patch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
        reset_process_state()
        get_api_settings.cache_clear()
        get_console_settings.cache_clear()
        upgrade()
        with embedded_worker(get_app(), concurrency=3):
            yield TestClient(app)
        reset_process_state()
        get_api_settings.cache_clear()
        get_console_settings.cache_clear()
