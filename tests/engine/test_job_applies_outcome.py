"""A job applies its own outcome in the transaction that commits it, on PostgreSQL.

When no one holds the run, the next job is decided in that same commit. When a
coordinator holds the run, the job neither waits for it nor deadlocks with it (the run is
locked FOR NO KEY UPDATE, the outcome row only needs KEY SHARE): it commits its result and
leaves the outcome pending. When applying fails, the savepoint keeps the job's work.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import select, update

import orchestrator.engine.coordinator as coordinator_module
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.jobs import JobRequest
from orchestrator.db.models import InboxSignal, Job, OutboxMessage, WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.engine.coordinator import coordinate
from orchestrator.engine.run_rows import lock_run
from orchestrator.jobs.runtime import Delivered, Delivery, JobRun, run_job
from orchestrator.observability.metrics import SIGNALS_DECIDED
from orchestrator.service.operations import cancel_run
from orchestrator.testing.instant_jobs import instant_service
from orchestrator.testing.worker_processes import WorkerProcesses
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import scaled


def coordinate_now(run_id: uuid.UUID) -> None:
    """Apply the run's pending signals in this process (a kick returns nothing)."""
    coordinate(run_id)


@pytest.fixture
def owner(fleet: WorkerProcesses) -> Iterator[Actor]:
    """Runs of this tenant are cancelled afterwards: no queued job of theirs is left for
    the lost-job sweeps of later tests sharing the database."""
    actor, _ = new_tenant()
    yield actor
    with transaction() as session:
        runs = list(
            session.scalars(select(WorkflowRun.id).where(WorkflowRun.tenant_id == actor.tenant_id))
        )
    for run_id in runs:
        cancel_run(
            actor, run_id, reason="test over", idempotency_key="test-over", kick=coordinate_now
        )


def _run_waiting_on_ingestion(owner: Actor) -> tuple[uuid.UUID, JobRequest]:
    run = start_assessment(owner, documents=1)
    coordinate(run.id)  # no worker runs here: this process plays the coordinator
    with transaction() as session:
        job = session.scalars(select(Job).where(Job.run_id == run.id, Job.status == "queued")).one()
        return run.id, JobRequest.model_validate(job.request)


def _outcome_fate(request: JobRequest) -> str:
    with transaction() as session:
        return session.scalars(
            select(InboxSignal.fate).where(
                InboxSignal.run_id == request.run_id,
                InboxSignal.idempotency_key == f"outcome:{request.job_id}",
            )
        ).one()


def _job_status(job_id: str) -> str:
    with transaction() as session:
        return session.scalars(select(Job.status).where(Job.id == job_id)).one()


def _queued_job_ids(run_id: uuid.UUID) -> set[str]:
    with transaction() as session:
        return set(
            session.scalars(select(Job.id).where(Job.run_id == run_id, Job.status == "queued"))
        )


@pytest.mark.broker_matrix
def test_the_jobs_commit_decides_the_next_job(owner: Actor) -> None:
    run_id, request = _run_waiting_on_ingestion(owner)

    delivered = run_job(Delivery(request, retries_left=True), instant_service)

    assert delivered.outcome is JobRun.SUCCEEDED and delivered.applied is not None
    assert _outcome_fate(request) == "applied"
    next_jobs = _queued_job_ids(run_id)
    assert next_jobs == {f"{run_id}:index_kb:1"}
    assert [entry.task_id for entry in delivered.applied.outbox] == list(next_jobs)


@pytest.mark.broker_matrix
def test_a_held_run_neither_blocks_nor_deadlocks_the_job(owner: Actor) -> None:
    run_id, request = _run_waiting_on_ingestion(owner)
    results: list[Delivered] = []
    with transaction() as holder:
        assert lock_run(holder, run_id) is not None  # a coordinator busy with this run
        worker = threading.Thread(
            target=lambda: results.append(
                run_job(Delivery(request, retries_left=True), instant_service)
            )
        )
        worker.start()
        worker.join(timeout=scaled(30))
        assert not worker.is_alive(), "the job waited for the run's lock"
    (delivered,) = results
    assert delivered.outcome is JobRun.SUCCEEDED and delivered.applied is None
    assert _job_status(request.job_id) == "succeeded"
    assert _outcome_fate(request) == "pending", "left for the coordinator"

    assert coordinate(run_id).decided == 1
    assert _outcome_fate(request) == "applied"
    assert _queued_job_ids(run_id) == {f"{run_id}:index_kb:1"}


@pytest.mark.broker_matrix
def test_a_failure_while_applying_keeps_the_jobs_work(
    owner: Actor, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id, request = _run_waiting_on_ingestion(owner)

    def broken_decide(*_: object) -> None:
        raise RuntimeError("a defect in the decision")

    with monkeypatch.context() as patched:
        patched.setattr(coordinator_module, "decide", broken_decide)
        delivered = run_job(Delivery(request, retries_left=True), instant_service)

    assert delivered.outcome is JobRun.SUCCEEDED and delivered.applied is None
    assert _job_status(request.job_id) == "succeeded"
    assert _outcome_fate(request) == "pending"
    assert coordinate(run_id).decided == 1
    assert _outcome_fate(request) == "applied"


@pytest.mark.broker_matrix
def test_decisions_rolled_back_with_the_savepoint_are_not_reported(
    owner: Actor, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id, request = _run_waiting_on_ingestion(owner)
    decided = SIGNALS_DECIDED.labels("documents_ingested", "applied")
    before = decided._value.get()

    def lost_race(*_: object) -> None:  # after the decision was made and observed
        raise RuntimeError("the run's version moved")

    with monkeypatch.context() as patched:
        patched.setattr(coordinator_module, "save_state", lost_race)
        delivered = run_job(Delivery(request, retries_left=True), instant_service)

    assert delivered.applied is None and _outcome_fate(request) == "pending"
    assert decided._value.get() == before, "a rolled back decision was reported"
    coordinate(run_id)
    assert decided._value.get() == before + 1


@pytest.mark.broker_matrix
def test_the_claim_marks_the_outbox_and_a_finished_or_cancelled_job_is_not_run_again(
    owner: Actor,
) -> None:
    run_id, request = _run_waiting_on_ingestion(owner)
    with transaction() as session:  # as if its send had failed: the claim still marks it
        session.execute(
            update(OutboxMessage)
            .where(OutboxMessage.task_id == request.job_id)
            .values(published_at=None)
        )

    assert (
        run_job(Delivery(request, retries_left=True), instant_service).outcome is JobRun.SUCCEEDED
    )
    with transaction() as session:
        job = session.get(Job, request.job_id)
        assert job is not None and (job.status, job.deliveries) == ("succeeded", 1)
        assert (
            session.scalars(
                select(OutboxMessage.published_at).where(OutboxMessage.task_id == request.job_id)
            ).one()
            is not None
        ), "marked on claim"

    again = run_job(Delivery(request, retries_left=True), instant_service)
    assert again.outcome is JobRun.ALREADY_FINISHED and again.applied is None
    next_request = _queued_request(run_id)
    cancel_run(
        owner, run_id, reason="changed our mind", idempotency_key="cancel", kick=coordinate_now
    )
    assert (
        run_job(Delivery(next_request, retries_left=True), instant_service).outcome
        is JobRun.SKIPPED
    )
    unknown = next_request.model_copy(update={"job_id": f"{run_id}:index_kb:9"})
    assert run_job(Delivery(unknown, retries_left=True), instant_service).outcome is JobRun.SKIPPED
    with transaction() as session:
        deliveries = {
            job_id: count
            for job_id, count in session.execute(
                select(Job.id, Job.deliveries).where(Job.run_id == run_id)
            )
        }
    assert deliveries == {request.job_id: 1, next_request.job_id: 0}


def _queued_request(run_id: uuid.UUID) -> JobRequest:
    with transaction() as session:
        job = session.scalars(select(Job).where(Job.run_id == run_id, Job.status == "queued")).one()
        return JobRequest.model_validate(job.request)
