"""Jobs that fan out: a job's items split into batches any worker of its queue may take.

The job plans its batches (rows in `job_batches`, idempotent on the job id), sends one
message per batch to its queue, then takes batches itself until none is left to take and
waits for the ones other workers hold. A batch is claimed with a lease as long as a job's
(`LIFECYCLE_SWEEP_JOB_LEASE_S`), which its holder renews while it works, as a job's is
(orchestrator.jobs.heartbeat): a worker that dies or is cut off holding one loses it within
that lease, and whoever comes next takes it over. A batch does its work outside any
transaction and commits its results together with its `succeeded` mark.
A batch that fails goes back to the queue alone, with its attempts counted; once they are
used up it is `failed` and the job fails (retryable: its next delivery re-queues the
failed batches, the succeeded ones stay done). The job's step completes only when every
batch has: the database says so, never a chord or a result backend.
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import Update, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.db.batch_models import JobBatch
from orchestrator.db.session import read_transaction, transaction
from orchestrator.engine.messages import send_batch
from orchestrator.jobs.heartbeat import Renew, renewing
from orchestrator.jobs.interface import JobFailure

log = logging.getLogger(__name__)

#: Writes a batch's results, in the transaction that marks it done.
WriteResults = Callable[[Session], None]
#: Computes a batch's results outside any transaction; returns what writes them.
Work = Callable[[list[str]], WriteResults]
WAIT_INTERVAL_S = 0.2
#: The hard time limit of a batch task; a claim is renewed no longer (a task hung past it
#: in a live process lets its lease lapse).
BATCH_TIME_LIMIT_S = 660


@dataclass(frozen=True)
class Claimed:
    id: str
    items: list[str]
    attempt: int


_unreleased: dict[str, tuple[Claimed, str]] = {}
"""Claims this process could not give back (the database went away while it did the batch
or recorded its failure): given back before this process claims again, so a job retried
after an outage takes its batch again at once instead of waiting for the lease to lapse."""
_unreleased_lock = threading.Lock()


@dataclass(frozen=True)
class BatchProgress:
    step: str
    done: int
    total: int
    failed: int


#: At least this many batches when there are enough items: a few large batches leave the
#: last one to a single worker (the SoA's chunks made 2 batches of 32: ingest_soa was
#: 1.3x faster with two workers, the second batch alone taking 7 of its 7.7 s).
MIN_BATCHES = 8


def spread(items: int, size: int) -> int:
    """Items per batch: `size` (the job kind's setting), or fewer so that there are at
    least MIN_BATCHES batches."""
    return max(1, min(size, -(-items // MIN_BATCHES)))


def batch_id(job_id: str, seq: int) -> str:
    return f"{job_id}:batch:{seq}"


def plan(
    job_id: str, run_id: uuid.UUID, tenant_id: str, step: str, items: Sequence[str], size: int
) -> list[str]:
    """The job's batches (made once; failed ones queued again): ids of those to do.

    Two deliveries of one job (a publish sent again after a lost confirm) may plan at the
    same moment: the second one's rows collide with the first's, and the first plan stands.
    """
    try:
        with transaction() as session:
            if not _planned(session, job_id):
                now = utcnow()
                for seq, start in enumerate(range(0, len(items), size)):
                    session.add(
                        JobBatch(
                            id=batch_id(job_id, seq),
                            job_id=job_id,
                            run_id=run_id,
                            tenant_id=tenant_id,
                            step=step,
                            seq=seq,
                            items={"ids": list(items[start : start + size])},
                            status="queued",
                            attempts=0,
                            created_at=now,
                        )
                    )
    except IntegrityError:
        log.info("batches of %s were planned by another delivery of the job", job_id)
    with transaction() as session:
        session.execute(
            update(JobBatch)
            .where(JobBatch.job_id == job_id, JobBatch.status == "failed")
            .values(status="queued", attempts=0, error=None)
        )
        return list(
            session.scalars(
                select(JobBatch.id)
                .where(JobBatch.job_id == job_id, JobBatch.status != "succeeded")
                .order_by(JobBatch.seq)
            )
        )


def _planned(session: Session, job_id: str) -> bool:
    count = session.scalar(
        select(func.count()).select_from(JobBatch).where(JobBatch.job_id == job_id)
    )
    return bool(count)


def _claimable(now: object) -> object:
    return or_(
        JobBatch.status == "queued",
        (JobBatch.status == "started") & (JobBatch.lease_until < now),
    )


def claim(batch: str) -> Claimed | None:
    """Take this batch if nobody holds it (or its holder's lease lapsed)."""
    release_unreleased()
    now = utcnow()
    lease = now + _lease()
    with transaction() as session:
        row = session.execute(
            update(JobBatch)
            .where(JobBatch.id == batch, _claimable(now))  # type: ignore[arg-type]
            .values(status="started", attempts=JobBatch.attempts + 1, lease_until=lease)
            .returning(JobBatch.items, JobBatch.attempts)
        ).first()
    if row is None:
        return None
    return Claimed(batch, list(row.items["ids"]), int(row.attempts))


def _lease() -> timedelta:
    return timedelta(seconds=get_settings().sweeps.job_lease_s)


def _held(claimed: Claimed) -> Update:
    """An update of the batch while this claim still holds it (a lapsed lease taken over,
    or a claim given back, is not this claim's any more)."""
    return update(JobBatch).where(
        JobBatch.id == claimed.id,
        JobBatch.status == "started",
        JobBatch.attempts == claimed.attempt,
    )


def _renew(claimed: Claimed) -> Renew:
    def renew(session: Session) -> None:
        session.execute(_held(claimed).values(lease_until=utcnow() + _lease()))

    return renew


def _next_claimable(job_id: str) -> str | None:
    with read_transaction() as session:
        return session.scalar(
            select(JobBatch.id)
            .where(JobBatch.job_id == job_id, _claimable(utcnow()))  # type: ignore[arg-type]
            .order_by(JobBatch.seq)
            .limit(1)
        )


def run_claimed(claimed: Claimed, work: Work) -> bool:
    """Do a claimed batch; True when it succeeded. Its results commit with its mark, and
    only while this claim still holds it (a lapsed lease taken over commits nothing). A
    claim whose outcome could not be written is kept to be given back (`_unreleased`)."""
    with renewing(claimed.id, _renew(claimed), renew_for_s=BATCH_TIME_LIMIT_S):
        return _run_claimed(claimed, work)


def _run_claimed(claimed: Claimed, work: Work) -> bool:
    try:
        write = work(claimed.items)
    except Exception as error:
        log.exception("batch %s failed (attempt %d)", claimed.id, claimed.attempt)
        _keep_unreleased(claimed, error)
        release_unreleased()  # gives it back now, unless the database is away
        return False
    try:
        with transaction() as session:
            held = session.execute(
                _held(claimed)
                .values(status="succeeded", finished_at=utcnow(), lease_until=None, error=None)
                .returning(JobBatch.id)
            ).first()
            if held is not None:
                write(session)
    except Exception as error:
        _keep_unreleased(claimed, error)
        raise
    return held is not None


def _keep_unreleased(claimed: Claimed, error: Exception) -> None:
    with _unreleased_lock:
        _unreleased[claimed.id] = (claimed, f"{type(error).__name__}: {error}")


def release_unreleased() -> None:
    """Give back the claims this process holds but no longer works on, a failed batch's
    included (raises while the database is away: they stay kept)."""
    with _unreleased_lock:
        pending = list(_unreleased.values())
    for claimed, error in pending:
        _failed(claimed, error)
        with _unreleased_lock:
            _unreleased.pop(claimed.id, None)


def _failed(claimed: Claimed, error: str) -> None:
    used_up = claimed.attempt >= get_settings().job_batch_attempts
    with transaction() as session:
        session.execute(
            _held(claimed).values(
                status="failed" if used_up else "queued",
                lease_until=None,
                error=error[:2000],
                finished_at=utcnow() if used_up else None,
            )
        )


def progress_of(job_id: str) -> BatchProgress | None:
    with read_transaction() as session:
        rows = session.execute(
            select(JobBatch.step, JobBatch.status, func.count())
            .where(JobBatch.job_id == job_id)
            .group_by(JobBatch.step, JobBatch.status)
        ).all()
    if not rows:
        return None
    counts = {str(status): int(count) for _, status, count in rows}
    return BatchProgress(
        str(rows[0][0]), counts.get("succeeded", 0), sum(counts.values()), counts.get("failed", 0)
    )


def drive(job_id: str, work: Work, timeout_s: float) -> BatchProgress:
    """Take this job's batches until none is left, then wait for those others hold (and
    take over any whose lease lapsed). Raises a retryable JobFailure if a batch failed."""
    deadline = time.monotonic() + timeout_s
    release_unreleased()
    while True:
        batch = _next_claimable(job_id)
        if batch is not None:
            claimed = claim(batch)
            if claimed is not None:
                run_claimed(claimed, work)
            continue
        progress = progress_of(job_id)
        if progress is None or progress.done == progress.total:
            return progress or BatchProgress("", 0, 0, 0)
        if progress.failed:
            raise JobFailure(
                "batch_failed",
                f"{progress.failed} of {progress.total} batches failed",
                retryable=True,
            )
        if time.monotonic() > deadline:
            raise JobFailure(
                "batches_unfinished", f"{progress} after {timeout_s} s", retryable=True
            )
        time.sleep(WAIT_INTERVAL_S)


def drive_alongside(job_id: str, work: Work, timeout_s: float, threads: int) -> BatchProgress:
    """`drive` in this thread and `threads - 1` more: where this process is the only
    worker (the embedded broker), its cores take the batches side by side. The work runs
    outside the interpreter's lock for most of its time (the model in ONNX Runtime, parsers
    in their sandbox process). A helper's failure is its batch's, which `drive` here
    reports with the rest."""
    if threads <= 1:
        return drive(job_id, work, timeout_s)
    with ThreadPoolExecutor(threads - 1, thread_name_prefix=f"batches-{job_id[:8]}") as pool:
        helpers = [
            pool.submit(contextvars.copy_context().run, drive, job_id, work, timeout_s)
            for _ in range(threads - 1)
        ]
        try:
            return drive(job_id, work, timeout_s)
        finally:
            wait(helpers)


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def fan_out(
    request: JobRequest,
    items: Sequence[str],
    size: int,
    offer: tuple[str, str, dict[str, Any]],
    work: Work,
    deadline_of: JobKind | None = None,
    key: str | None = None,
) -> BatchProgress:
    """A job's items in batches: plan them, offer all but the first to the workers of a
    queue (`offer`: the batch task, its queue and the message body, to which each batch's
    id is added), take them here until none is left and wait for the rest within the
    deadline of the job's kind (or `deadline_of`'s). On the embedded broker there is one
    process anyway: it does every batch itself, a thread per core. A job that fans out
    twice gives the other fan-out a `key` of its own (planned once per key, as once per
    job)."""
    settings = get_settings()
    key = key or request.job_id
    planned = plan(key, request.run_id, request.tenant_id, request.step.value, items, size)
    task_name, queue, body = offer
    if not settings.is_embedded_broker:
        for batch in planned[1:]:  # the first is this process's own
            try:
                # Its tenant and queue let a worker give way to another tenant's
                # first job (orchestrator.jobs.task.run_batch_task).
                offered = {**body, "batch_id": batch, "tenant_id": request.tenant_id}
                send_batch(task_name, queue, batch, {**offered, "queue": queue})
            except Exception:  # this process takes what nobody else was offered
                log.warning("could not offer batch %s to the queue", batch, exc_info=True)
    deadline = settings.sweeps.job_deadline(deadline_of or request.kind).total_seconds()
    if settings.is_embedded_broker:
        done = drive_alongside(key, work, deadline, min(len(planned), cores()))
    else:
        done = drive(key, work, deadline)
    log.info("%s %s: %d/%d batches done", request.step.value, key, done.done, done.total)
    return done
