"""The one interface every heavy job and analysis service implements."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy.orm import Session

from orchestrator.contracts.errors import FleetError
from orchestrator.contracts.jobs import ArtifactRef, JobRequest


class JobFailure(FleetError):
    """A typed job error. `retryable` errors are retried with backoff; others fail the step.

    With `keep_results`, what the service wrote before failing commits with the failure
    instead of rolling back: facts that stay true whatever the job's fate (each document's
    ingestion outcome). A retryable failure with retries left still rolls back.
    """

    def __init__(
        self, code: str, message: str, *, retryable: bool = False, keep_results: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.keep_results = keep_results


@dataclass(frozen=True)
class JobContext:
    """What a service gets: the request, an open transaction, and where files go.

    The transaction holds the job's row lock. Everything the service writes commits
    together with the job's success and its completion signal, or not at all.
    """

    request: JobRequest
    session: Session
    storage_dir: Path
    prepared: Any = None
    """What the job's `Prepare` returned, if it has one."""


@dataclass(frozen=True)
class JobResult:
    summary: dict[str, Any] = field(default_factory=dict)
    """Small, safe figures for the audit trail and the run view (counts, ids)."""
    artifact: ArtifactRef | None = None
    """The draft artifact the job produced, when its step produces one."""


class JobService(Protocol):
    def __call__(self, context: JobContext) -> JobResult: ...


#: Heavy, idempotent work a job does before its transaction opens, in short transactions
#: of its own (embedding): a transaction that computes for minutes holds row locks, and on
#: SQLite the database's one write lock, that long. What it writes must be right whatever
#: the job's fate (a chunk's vector is); a crash there is handled like one in the job.
Prepare = Callable[[JobRequest], Any]


class PrepareAgain(FleetError):
    """Raised inside the job's transaction when what its `Prepare` computed is missing or
    no longer matches the database (an input changed meanwhile). The runtime rolls the
    transaction back, runs `prepare` again outside any transaction and tries once more:
    the work is redone before the lock, never under it."""

    def __init__(self, prepare: Prepare, reason: str) -> None:
        super().__init__(reason)
        self.prepare = prepare
        self.reason = reason
