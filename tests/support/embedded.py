"""The embedded environment (SQLite file + in-memory broker) a test runs in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.db.migrate import upgrade
from orchestrator.testing.reset import reset_process_state

#: Variables that would point a test at real services; the embedded default unsets them.
LIFECYCLE_VARS = (
    "LIFECYCLE_DATABASE_URL",
    "LIFECYCLE_BROKER_URL",
    "LIFECYCLE_STORAGE_DIR",
    "LIFECYCLE_HOLD_JOB_STEP",
)


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh SQLite database and storage under tmp_path; the broker is in memory."""
    for name in LIFECYCLE_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LIFECYCLE_HOME", str(tmp_path))
    reset_process_state()
    upgrade()
    yield tmp_path
    reset_process_state()
