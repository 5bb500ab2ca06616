"""Shared fixtures: an embedded (SQLite + in-memory broker) environment per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.db.migrate import upgrade
from orchestrator.reset import reset_process_state

# The fleet's tests exercise orchestration, and on SQLite a job holds the write lock while
# it runs: they use the hashing embedder, which needs no model. Retrieval tests choose the
# MiniLM model explicitly (test_minilm_numpy.py, test_drafts_real_data.py); worker
# processes inherit this.
os.environ.setdefault("LIFECYCLE_EMBEDDER", "hashing")

_LIFECYCLE_VARS = ("LIFECYCLE_DATABASE_URL", "LIFECYCLE_BROKER_URL", "LIFECYCLE_STORAGE_DIR",
                   "LIFECYCLE_HOLD_JOB_STEP")


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh SQLite database and storage under tmp_path; the broker is in memory."""
    for name in _LIFECYCLE_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LIFECYCLE_HOME", str(tmp_path))
    reset_process_state()
    upgrade()
    yield tmp_path
    reset_process_state()
