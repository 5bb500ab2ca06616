"""Every process of a real fleet reads and writes one storage directory: a worker started
with a relative home or storage says so when it starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config.settings import Settings, reset_settings
from orchestrator.observability.celery_hooks import on_worker_init


def test_a_relative_home_is_a_problem_only_for_a_real_fleet(tmp_path: Path) -> None:
    real = "redis://127.0.0.1:6379/0"
    relative = Settings(broker_url=real, home=Path(".lifecycle"))
    assert relative.storage_problem is not None
    assert "LIFECYCLE_HOME" in relative.storage_problem
    assert str(relative.resolved_storage_dir) in relative.storage_problem
    assert Settings(broker_url=real, home=tmp_path).storage_problem is None
    assert (
        Settings(broker_url=real, home=Path("rel"), storage_dir=tmp_path).storage_problem is None
    ), "an absolute storage directory is shared whatever the home"
    assert Settings(broker_url="memory://", home=Path("rel")).storage_problem is None


def test_a_worker_with_a_relative_home_warns_when_it_starts(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LIFECYCLE_BROKER_URL", "redis://127.0.0.1:6379/0")
    monkeypatch.setenv("LIFECYCLE_HOME", ".lifecycle")
    monkeypatch.delenv("LIFECYCLE_STORAGE_DIR", raising=False)
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    reset_settings()
    try:
        with caplog.at_level("WARNING"):
            on_worker_init()
    finally:
        reset_settings()
    assert any("storage is not shared" in r.getMessage() for r in caplog.records)
