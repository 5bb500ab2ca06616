"""A job that failed ends its Celery task in FAILURE, so Flower counts it.

The job's outcome is already durable when this is raised (the job row is `failed` and the
run's inbox holds `job_failed`), and the task acks its message on failure like on success
(`acks_late` acks a task that raised), so raising changes nothing but what monitors see.
Job tasks list it in `throws`: the worker logs it as an expected outcome, without a
traceback.
"""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.errors import FleetError


class JobFailedForGood(FleetError):
    """Raised by a job task after its failure was recorded; never retried."""

    outcome = "failed"
    """The job outcome metrics count it under (instead of the task state `failure`)."""

    def __init__(self, job_id: str, error: dict[str, Any] | None) -> None:
        error = error or {}
        code, message = error.get("code", "unknown"), error.get("message", "")
        super().__init__(self._describe(job_id, f"{code}: {message}".rstrip(": ")))
        self.job_id, self.code, self.error = job_id, code, error

    def __reduce__(self) -> tuple[type[JobFailedForGood], tuple[str, dict[str, Any]]]:
        # Celery checks a task's exception pickles; without this it wraps it in a stand-in
        # class, `throws` no longer matches, and the worker logs it as unexpected.
        return type(self), (self.job_id, self.error)

    @staticmethod
    def _describe(job_id: str, error: str) -> str:
        return f"job {job_id} failed for good: {error}"


class JobAlreadyFailed(JobFailedForGood):
    """Raised by a later delivery of a job whose row was already failed, e.g. the stale
    message of a dead-lettered job that a worker consumed at last: the task is a FAILURE
    again, naming the recorded error, and nothing is redone."""

    outcome = "already_failed"

    @staticmethod
    def _describe(job_id: str, error: str) -> str:
        return f"job {job_id} had already failed: {error}"
