"""Job heartbeats: a long job says it is alive, so the lost-job sweep leaves it alone.

A service calls `heartbeat(context.request.job_id)` now and then (say, per document).
The beat is written in its own short transaction to `job_watch`, never to the job row:
the running job holds that row's lock until it commits. Calls closer together than
`min_interval_s` are skipped, so calling it in a tight loop costs nothing.
"""

from __future__ import annotations

import time

from orchestrator.contracts.clock import utcnow
from orchestrator.db.ops_models import JobWatch
from orchestrator.db.session import get_engine, transaction
from orchestrator.db.sql import insert_for

_last_beat: dict[str, float] = {}


def heartbeat(job_id: str, min_interval_s: float = 30.0) -> bool:
    """Record that `job_id` is alive; False when skipped (too soon, or on SQLite, where the
    job's transaction holds the database's one write lock and sweeps cannot run anyway)."""
    if get_engine().dialect.name == "sqlite":
        return False
    last = _last_beat.get(job_id)
    if last is not None and time.monotonic() - last < min_interval_s:
        return False
    now = utcnow()
    with transaction() as session:
        session.execute(
            insert_for(session, JobWatch)
            .values(job_id=job_id, redispatches=0, heartbeat_at=now)
            .on_conflict_do_update(index_elements=["job_id"], set_={"heartbeat_at": now})
        )
    if len(_last_beat) > 10_000:
        _last_beat.clear()  # finished jobs' entries; a skipped check costs one write
    _last_beat[job_id] = time.monotonic()
    return True
