"""Forget process-wide caches (settings, engines, the Celery app) after the environment changes."""

from __future__ import annotations

from orchestrator.db.session import dispose_engines
from orchestrator.fleet import get_app
from orchestrator.settings import get_settings


def reset_process_state() -> None:
    dispose_engines()
    get_settings.cache_clear()
    get_app.cache_clear()
