"""No heavy computation while a job holds its write transaction.

A job's transaction holds row locks, and on SQLite the database's one write lock: while it
is open, every other writer waits. The job runtime marks that transaction open; parsing,
embedding, drafting and rendering call `computing(...)` first and refuse to run inside
it, so such work can only happen in a job's `Prepare`, before the transaction opens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar

from orchestrator.contracts.errors import FleetError

#: What holds the write transaction in this thread of work ("job ingest_soa:<id>"), if any.
_holder: ContextVar[str | None] = ContextVar("write_transaction_holder", default=None)
#: The job this thread of work runs (its prepare and its transaction), if any.
_job: ContextVar[str | None] = ContextVar("computing_for_job", default=None)

Observer = Callable[[str, str | None, str | None], None]
"""Told (what is computed, for which job, inside which write transaction) on every check."""
_observers: list[Observer] = []


class ComputeUnderWriteLock(FleetError, RuntimeError):
    """Heavy work was started inside a job's write transaction: it belongs in its Prepare."""


@contextmanager
def _bound(variable: ContextVar[str | None], value: str) -> Iterator[None]:
    token = variable.set(value)
    try:
        yield
    finally:
        variable.reset(token)


def job_scope(job: str) -> AbstractContextManager[None]:
    """This thread of work runs `job` (its prepare and its transaction) in the block."""
    return _bound(_job, job)


def write_transaction_open(holder: str) -> AbstractContextManager[None]:
    """`holder` holds the write transaction in the block: heavy work refuses to run."""
    return _bound(_holder, holder)


def write_transaction_holder() -> str | None:
    return _holder.get()


def computing(what: str) -> None:
    """Call before heavy work; raises inside a job's write transaction."""
    holder = _holder.get()
    for observer in list(_observers):
        observer(what, _job.get(), holder)
    if holder is not None:
        raise ComputeUnderWriteLock(
            f"{what} was started inside the write transaction of {holder}; heavy work "
            "belongs in the job's Prepare, before its transaction opens"
        )


@contextmanager
def observing(observer: Observer) -> Iterator[None]:
    """Tell `observer` about every check while the block runs (tests, benchmarks)."""
    _observers.append(observer)
    try:
        yield
    finally:
        _observers.remove(observer)
