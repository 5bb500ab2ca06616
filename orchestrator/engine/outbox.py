"""Publishing outbox rows to Celery right after the coordinator's transaction committed.

The coordinator does not spend a second transaction marking rows published: the job
marks its own row when it claims the work (orchestrator/jobs/runtime.py), and the outbox
sweep publishes, and marks, rows whose job was never claimed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutboxEntry:
    """One job message, as written to the outbox row in the coordinator's transaction."""

    task_name: str
    queue: str
    task_id: str
    body: dict[str, Any]


@dataclass(frozen=True)
class PublishedBatch:
    published: int
    failed: int


def publish_messages(messages: Sequence[OutboxEntry]) -> PublishedBatch:
    """Send each message; a failed send is left for the sweep, it stops nothing else."""
    from orchestrator.engine.messages import send_job

    sent = 0
    for message in messages:
        try:
            send_job(message.task_name, message.queue, message.task_id, message.body)
        except Exception:
            log.exception("publishing the message of job %s failed", message.task_id)
            continue
        sent += 1
    return PublishedBatch(sent, len(messages) - sent)
