"""What a delivery of a job that is not to run reports (embedded database): the outcome
the task's Celery state follows, and the words Flower shows for it. Nothing is redone."""

from __future__ import annotations

import uuid
from pathlib import Path

from sqlalchemy import update

from orchestrator.contracts.jobs import JobRequest
from orchestrator.db.models import Job
from orchestrator.db.session import transaction
from orchestrator.engine.coordinator import coordinate
from orchestrator.jobs.failed import JobAlreadyFailed
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult
from orchestrator.jobs.not_run import why_not_run
from orchestrator.jobs.runtime import Delivery, JobRun, run_job
from orchestrator.service.operations import cancel_run
from orchestrator.testing.instant_jobs import instant_service
from tests.support.sweeps import job, new_tenant, run_until_job_queued


def unreadable(context: JobContext) -> JobResult:
    raise JobFailure("no_extractable_text", "nothing to read")


def coordinate_now(run_id: uuid.UUID) -> None:
    coordinate(run_id)


def delivery(job_id: str) -> Delivery:
    return Delivery(JobRequest.model_validate(job(job_id).request), retries_left=True)


def test_a_job_that_failed_is_reported_failed_again_not_finished(embedded: Path) -> None:
    owner, _ = new_tenant()
    _, job_id = run_until_job_queued(owner)
    assert run_job(delivery(job_id), unreadable).outcome is JobRun.FAILED

    again = run_job(delivery(job_id), instant_service)

    assert again.outcome is JobRun.ALREADY_FAILED and again.applied is None
    assert job(job_id).status == "failed" and job(job_id).deliveries == 1, "nothing redone"
    assert str(JobAlreadyFailed(job_id, job(job_id).error)) == (
        f"job {job_id} had already failed: no_extractable_text: nothing to read"
    )


def test_a_cancelled_job_says_whether_its_run_was_cancelled_or_it_was_superseded(
    embedded: Path,
) -> None:
    owner, _ = new_tenant()
    cancelled_run, cancelled = run_until_job_queued(owner)
    cancel_run(
        owner, cancelled_run, reason="scope changed", idempotency_key="c", kick=coordinate_now
    )
    _, superseded = run_until_job_queued(owner)
    with transaction() as session:  # what a reprocess's cancel writes: the run goes on
        session.execute(update(Job).where(Job.id == superseded).values(status="cancelled"))

    for job_id in (cancelled, superseded):
        assert run_job(delivery(job_id), instant_service).outcome is JobRun.SKIPPED
        assert job(job_id).status == "cancelled"
    assert why_not_run(cancelled) == (
        f"job {cancelled} was not run: cancelled with its run: scope changed"
    )
    assert why_not_run(superseded) == (
        f"job {superseded} was not run: superseded (its run was rewound to reprocess a step)"
    )
    assert why_not_run("nobody:index_kb:1") == (
        "job nobody:index_kb:1 was not run: it is unknown to the database"
    )
