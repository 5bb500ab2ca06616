"""Why a lost job was given up on, in words an operator acts on.

The commonest cause is a queue no worker consumes: re-dispatching cannot help, starting a
worker can. So the reason says first whether any live worker consumes the job's queue
(asked of the workers, best effort: when they cannot be asked it claims nothing).
"""

from __future__ import annotations

from orchestrator.engine.consumers import Consumers


def lost_job_reason(
    job_id: str, queue: str, deadline_s: float, redispatches: int, known: Consumers | None
) -> str:
    """`known`: which queues the live workers consume, None when that is unknown."""
    waited = f"no outcome or heartbeat within {deadline_s:g} s"
    consumers = None if known is None else known.get(queue, [])
    if consumers == []:
        return (
            f"job {job_id} lost: no worker consumes queue '{queue}' "
            f"({waited}, {redispatches} re-dispatch(es))"
        )
    reason = f"job {job_id} lost: {waited}, {redispatches} re-dispatch(es) did not help"
    if consumers is None:
        return f"{reason}; whether a worker consumes queue '{queue}' is unknown"
    return f"{reason}; queue '{queue}' is consumed by {', '.join(sorted(consumers))}"
