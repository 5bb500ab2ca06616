"""Fault injection: the process dies right after a commit, before sending a job's message.

A worker started with `--include orchestrator.testing.die_before_send` and
LIFECYCLE_DIE_BEFORE_SENDING=<step> exits at once (no cleanup, like kill -9) the first time
one of its transactions queued a job of that step and is about to send the message.
LIFECYCLE_DIE_BEFORE_SENDING_MARK names a file: once it exists, no process dies again, so a
restarted worker carries on.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from orchestrator.engine import coordinator
from orchestrator.engine.outbox import OutboxEntry, PublishedBatch

log = logging.getLogger(__name__)
STEP = os.environ.get("LIFECYCLE_DIE_BEFORE_SENDING")
MARK = Path(os.environ.get("LIFECYCLE_DIE_BEFORE_SENDING_MARK", "die-before-send.mark"))
_publish = coordinator.publish_messages


def _dying(messages: Sequence[OutboxEntry]) -> PublishedBatch:
    if STEP and not MARK.exists() and any(m.body.get("step") == STEP for m in messages):
        MARK.write_text(",".join(m.task_id for m in messages))
        log.warning("dying between commit and send of %s", [m.task_id for m in messages])
        os._exit(137)
    return _publish(messages)


coordinator.publish_messages = _dying  # type: ignore[assignment]
