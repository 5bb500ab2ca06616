"""Which live workers consume which queues, asked of the workers over the broker.

`inspect().active_queues()` is broadcast and waits the whole timeout for replies, so
answers are kept for a few seconds: a sweep that gives up on several jobs at once asks
once, not once per job.
"""

from __future__ import annotations

import logging
import threading
import time

from orchestrator.config.settings import get_settings
from orchestrator.engine.messages import get_app

log = logging.getLogger(__name__)

Consumers = dict[str, list[str]]
"""Queue name -> the workers consuming it (a queue nobody consumes is absent)."""

_FRESH_S = 0.0  # no reuse: a stale answer (workers since stopped or started) misleads
_last: tuple[float, Consumers] | None = None
_lock = threading.Lock()


def queue_consumers(timeout_s: float) -> Consumers:
    """Ask every live worker which queues it consumes, waiting `timeout_s` for replies.
    No reply means no worker; an error reaching the broker is raised."""
    replies = get_app().control.inspect(timeout=timeout_s).active_queues() or {}
    consumers: Consumers = {}
    for worker, queues in replies.items():
        for queue in queues or []:
            consumers.setdefault(str(queue.get("name", "?")), []).append(worker)
    return consumers


def consumers_of(queue: str, timeout_s: float) -> list[str] | None:
    """The workers consuming `queue` (best effort, answers up to a few seconds old);
    None when it could not be found out. The embedded memory broker is not asked: its
    in-process worker consumes every queue while the process runs."""
    global _last
    if get_settings().is_embedded_broker:
        return None
    with _lock:
        if _last is None or time.monotonic() - _last[0] > _FRESH_S:
            try:
                _last = (time.monotonic(), queue_consumers(timeout_s))
            except Exception:  # unknown is an answer: the caller must not claim "none"
                log.warning("could not ask the workers which queues they consume", exc_info=True)
                return None
        return list(_last[1].get(queue, []))


def forget_consumers() -> None:
    """Drop the kept answer (tests that start or stop workers)."""
    global _last
    with _lock:
        _last = None
