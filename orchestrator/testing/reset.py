"""Forget process-wide caches (settings, engines, the Celery app) after the environment changes."""

from __future__ import annotations

from kombu.transport import memory

from orchestrator.config.settings import reset_settings
from orchestrator.db.session import dispose_engines
from orchestrator.engine.messages import get_app


def reset_process_state() -> None:
    dispose_engines()
    reset_settings()
    get_app.cache_clear()
    # The in-memory broker's queues are class-wide: messages one embedded database left
    # queued would reach the next one's worker.
    memory.Channel.queues.clear()
    memory.Channel.events.clear()
