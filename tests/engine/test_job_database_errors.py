"""A job that meets a database error, at its claim or in its work, is retried, not lost.

The failure is injected into the job runtime's own database access, on the embedded
database; nothing else is replaced.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.jobs import JobRequest
from orchestrator.db.models import Job
from orchestrator.db.session import transaction
from orchestrator.jobs import runtime
from orchestrator.jobs.interface import JobFailure
from orchestrator.jobs.runtime import Delivery, JobRun, run_job
from orchestrator.jobs.task import run_job_task
from orchestrator.testing.instant_jobs import instant_service
from tests.support.sweeps import new_tenant, run_until_job_queued

LOST = OperationalError(
    "UPDATE jobs SET status=...", {}, Exception("server closed the connection unexpectedly")
)


def _queued_job(job_id: str) -> tuple[JobRequest, Job]:
    with transaction() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return JobRequest.model_validate(job.request), job


def _failing_first(monkeypatch: pytest.MonkeyPatch, failures: int = 1) -> list[int]:
    """The runtime's next `failures` transactions fail as a dropped connection does."""
    real = runtime.transaction
    calls = [0]

    @contextmanager
    def flaky() -> Iterator[Session]:
        calls[0] += 1
        if calls[0] <= failures:
            raise LOST
        with real() as session:
            yield session

    def patched() -> AbstractContextManager[Session]:
        return flaky()

    monkeypatch.setattr(runtime, "transaction", patched)
    return calls


def test_a_database_error_at_the_claim_is_retried_and_the_job_runs_once(
    embedded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner, _ = new_tenant()
    _, job_id = run_until_job_queued(owner)
    request, _ = _queued_job(job_id)
    calls = _failing_first(monkeypatch)

    with pytest.raises(JobFailure) as failure:
        run_job(Delivery(request, retries_left=True), instant_service)

    assert calls[0] == 1, "the failure was injected into the claim"
    assert (failure.value.code, failure.value.retryable) == ("database_unavailable", True)
    _, job = _queued_job(job_id)
    assert (job.status, job.deliveries) == ("queued", 0)
    assert (
        run_job(Delivery(request, retries_left=True), instant_service).outcome is JobRun.SUCCEEDED
    )
    _, job = _queued_job(job_id)
    assert (job.status, job.deliveries) == ("succeeded", 1)


class _Retry(Exception):
    pass


def _task(retries: int, retried: list[dict[str, Any]]) -> Any:
    def retry(*, exc: BaseException, countdown: float, max_retries: int) -> _Retry:
        retried.append({"exc": exc, "countdown": countdown, "max_retries": max_retries})
        return _Retry()

    return SimpleNamespace(request=SimpleNamespace(retries=retries), retry=retry)


def test_the_database_gets_more_retries_than_the_job_itself(
    embedded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An outage of a minute outlasts a job's own few retries; the job waits it out."""
    owner, _ = new_tenant()
    _, job_id = run_until_job_queued(owner)
    request, _ = _queued_job(job_id)
    settings = get_settings()
    _failing_first(monkeypatch, failures=1)
    retried: list[dict[str, Any]] = []

    with pytest.raises(_Retry):
        run_job_task(
            _task(settings.job_max_retries, retried),
            request.model_dump(mode="json"),
            instant_service,
        )

    (retry,) = retried
    assert isinstance(retry["exc"], JobFailure)
    assert retry["exc"].code == "database_unavailable"
    assert retry["max_retries"] > settings.job_max_retries
    assert retry["countdown"] <= settings.job_retry_backoff_max_s
    waits = [
        min(settings.job_retry_backoff_s * 2**n, settings.job_retry_backoff_max_s)
        for n in range(retry["max_retries"])
    ]
    assert sum(waits) >= 300, "retries span well over a minute of outage"
