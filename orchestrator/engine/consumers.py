"""Which live workers consume which queues, asked of the workers over the broker.

`inspect().active_queues()` is broadcast and waits the whole timeout for replies, so a
caller asks once per piece of work (a sweep, a readiness check) and reads the answer for
every queue it cares about.
"""

from __future__ import annotations

import logging

from orchestrator.config.settings import get_settings
from orchestrator.engine.messages import get_app

log = logging.getLogger(__name__)

Consumers = dict[str, list[str]]
"""Queue name -> the workers consuming it (a queue nobody consumes is absent)."""


def queue_consumers(timeout_s: float) -> Consumers:
    """Ask every live worker which queues it consumes, waiting `timeout_s` for replies.
    No reply means no worker; an error reaching the broker is raised."""
    replies = get_app().control.inspect(timeout=timeout_s).active_queues() or {}
    consumers: Consumers = {}
    for worker, queues in replies.items():
        for queue in queues or []:
            consumers.setdefault(str(queue.get("name", "?")), []).append(worker)
    return consumers


def consumers_now() -> Consumers | None:
    """Which queues the live workers consume (best effort), or None when it could not be
    found out. The embedded memory broker is not asked: its in-process worker consumes
    every queue while the process runs."""
    if get_settings().is_embedded_broker:
        return None
    try:
        return queue_consumers(get_settings().observability.readiness_timeout_s)
    except Exception:  # unknown is an answer: the caller must not claim "none"
        log.warning("could not ask the workers which queues they consume", exc_info=True)
        return None
