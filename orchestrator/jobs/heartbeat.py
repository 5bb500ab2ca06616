"""Job leases: while a process runs a job, a thread of that process renews the job's lease.

The lost-job sweep takes a started job whose heartbeats stopped for the lease
(`LIFECYCLE_SWEEP_JOB_LEASE_S`) for lost and re-dispatches it: its worker died, was cut off,
or froze. A live process renews every `LIFECYCLE_JOB_HEARTBEAT_INTERVAL_S` for every job it
runs, whatever the job is doing (a job that hangs while its process lives is ended by its
hard time limit; renewals stop at the kind's deadline, above that limit, so a task that
hung in a live process lets its lease lapse too). A job's own code may still call
`heartbeat()` to say it made progress, which keeps it alive past the deadline.

Beats go to `job_watch` in short transactions of their own, never to the job row: the
running job holds that row's lock while it commits. On SQLite no sweep judges leases (the
embedded fleet lives in one process), so nothing is written there.

The same thread renews other leases a process holds while it works (a claimed batch of a
job that fans out: `renewing`), so a batch, like a job, is taken over within one lease of
its holder's death or cut-off, however long its work is.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.db.ops_models import JobWatch
from orchestrator.db.session import get_engine, transaction
from orchestrator.db.sql import insert_for

log = logging.getLogger(__name__)

_last_beat: dict[str, float] = {}
_leases: dict[str, float] = {}
"""Job id -> until when (monotonic) this process renews its lease."""
#: Writes one renewal of a lease other than a job's, in the renewer's transaction.
Renew = Callable[[Session], None]
_renewals: dict[str, tuple[float, Renew]] = {}
"""Key -> until when (monotonic) this process renews that lease, and how."""
_lock = threading.Lock()
_renewer: tuple[int, threading.Thread] | None = None
_stopping = threading.Event()


def heartbeat(job_id: str, min_interval_s: float = 30.0) -> bool:
    """Record that `job_id` is alive; False when skipped (too soon, or on SQLite)."""
    if _skipped():
        return False
    last = _last_beat.get(job_id)
    if last is not None and time.monotonic() - last < min_interval_s:
        return False
    _beat([job_id])
    return True


@contextmanager
def lease(job_id: str, renew_for_s: float) -> Iterator[None]:
    """Hold the job's lease for the block: renew it until the block exits or `renew_for_s`
    passed (the kind's deadline: past it only a hung task is still here, and its lease must
    lapse although its process lives). No beat at the start: the claim just stamped the
    job's `updated_at`, which the lost-job sweep reads as the lease's first beat, and the
    renewer's first write comes within one interval (a job shorter than that writes none)."""
    with _registered(_leases, job_id, time.monotonic() + renew_for_s):
        yield


@contextmanager
def renewing(key: str, renew: Renew, renew_for_s: float) -> Iterator[None]:
    """Renew another lease (`renew` writes it) every heartbeat interval for the block, at
    most `renew_for_s` (past it only a hung task is still here). Nothing on SQLite."""
    with _registered(_renewals, key, (time.monotonic() + renew_for_s, renew)):
        yield


@contextmanager
def _registered(registry: dict[str, Any], key: str, entry: Any) -> Iterator[None]:
    """`entry` in a registry the renewer reads, for the block (nothing on SQLite)."""
    if _skipped():
        yield
        return
    with _lock:
        registry[key] = entry
    _ensure_renewer()
    try:
        yield
    finally:
        with _lock:
            registry.pop(key, None)


def held_leases() -> frozenset[str]:
    """The jobs whose leases this process renews now."""
    now = time.monotonic()
    with _lock:
        return frozenset(job_id for job_id, until in _leases.items() if until > now)


def leases_written(session: Session) -> bool:
    """Whether workers on this database renew leases (all but SQLite's)."""
    return session.get_bind().dialect.name != "sqlite"


def _skipped() -> bool:
    return get_engine().dialect.name == "sqlite"


def _beat(job_ids: Iterable[str]) -> None:
    now = utcnow()
    ids = list(job_ids)
    with transaction() as session:
        for job_id in ids:
            session.execute(
                insert_for(session, JobWatch)
                .values(job_id=job_id, redispatches=0, heartbeat_at=now)
                .on_conflict_do_update(index_elements=["job_id"], set_={"heartbeat_at": now})
            )
    if len(_last_beat) > 10_000:
        _last_beat.clear()  # finished jobs' entries; a skipped check costs one write
    for job_id in ids:
        _last_beat[job_id] = time.monotonic()


def _ensure_renewer() -> None:
    """One renewing thread per process (a forked pool child starts its own)."""
    global _renewer
    with _lock:
        if _renewer is not None and _renewer[0] == os.getpid() and _renewer[1].is_alive():
            return
        thread = threading.Thread(target=_renew_forever, name="job-lease-renewer", daemon=True)
        first = _renewer is None or _renewer[0] != os.getpid()
        _renewer = (os.getpid(), thread)
    if first:
        atexit.register(_stop_renewer)
    thread.start()


def _stop_renewer() -> None:
    """At the interpreter's exit, before it finalises: with the renewer still running,
    a process crashed at exit (a segmentation fault in 2 of 3 runs of a short script)."""
    _stopping.set()
    renewer = _renewer
    if renewer is not None and renewer[0] == os.getpid():
        renewer[1].join(timeout=10)


def _renew_forever() -> None:
    # A timer, not a wait for another party; the interval is read each time (settings
    # change in a long-lived process only in tests, which must not wait for a stale one).
    while not _stopping.wait(get_settings().job_heartbeat_interval_s):
        held = held_leases()
        if held:
            try:
                _beat(held)
            except Exception:  # the database is away: the next renewal tries again
                log.warning("could not renew the lease of %d job(s)", len(held), exc_info=True)
        others = _held_renewals()
        if others:
            try:
                with transaction() as session:
                    for renew in others:
                        renew(session)
            except Exception:
                log.warning("could not renew %d other lease(s)", len(others), exc_info=True)


def _held_renewals() -> list[Renew]:
    now = time.monotonic()
    with _lock:
        return [renew for until, renew in _renewals.values() if until > now]
