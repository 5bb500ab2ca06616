"""Lost jobs with a moved clock: re-dispatched up to the limit, then dead-lettered."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import ValidationError

from orchestrator.config.settings import Settings, reset_settings
from orchestrator.config.sweeps import SweepSettings
from orchestrator.db.ops_models import DeadLetter, JobWatch
from orchestrator.engine.coordinator import coordinate
from orchestrator.engine.messages import get_app
from orchestrator.observability.broker_view import BrokerView, WorkerHoldings
from orchestrator.service.dead_letters import list_dead_letters
from orchestrator.service.producer import get_run
from orchestrator.sweeps import recover_lost_jobs
from orchestrator.sweeps.lost_jobs import LostJobs
from tests.support.sweeps import (
    Clock,
    audit_counts,
    audits_of,
    count,
    job,
    new_tenant,
    notifications_of,
    run_queued_jobs,
    run_until_job_queued,
    signals_of,
)

QueueLength = Callable[[str], int]


def test_a_queued_job_whose_message_was_lost_is_redispatched_once(
    clock: Clock, queued_messages: QueueLength
) -> None:
    owner, _ = new_tenant()
    run_id, job_id = run_until_job_queued(owner)
    before = queued_messages("ingestion")

    clock.advance(minutes=59)
    assert recover_lost_jobs() == LostJobs(0, 0)
    clock.advance(minutes=2)
    assert recover_lost_jobs() == LostJobs(1, 0)
    assert recover_lost_jobs() == LostJobs(0, 0), "re-dispatching restarts the deadline"

    assert queued_messages("ingestion") == before + 1
    assert audit_counts(run_id)["lifecycle_workflow_job_redispatched"] == 1
    run_queued_jobs(run_id)  # the re-dispatched message runs the job
    assert job(job_id).status == "succeeded"
    clock.advance(hours=5)
    recover_lost_jobs()  # the next step's job, queued since and never run here, may be
    redispatched = [
        event.event_metadata["job_id"]
        for event in audits_of(run_id, "lifecycle_workflow_job_redispatched")
    ]
    assert redispatched.count(job_id) == 1, "a finished job is never re-dispatched"
    assert job(job_id).status == "succeeded"


def test_a_started_job_is_lost_only_after_its_kinds_deadline(clock: Clock) -> None:
    owner, _ = new_tenant()
    run_id, job_id = run_until_job_queued(owner)
    _claim_without_finishing(job_id)

    clock.advance(seconds=899)  # ingest_documents: 900 s
    assert recover_lost_jobs() == LostJobs(0, 0)
    clock.advance(seconds=2)
    assert recover_lost_jobs() == LostJobs(1, 0)


def test_a_started_job_sent_again_waits_while_its_copy_waits_in_a_read_queue(
    clock: Clock, queued_messages: QueueLength, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.sweeps import lost_jobs

    owner, _ = new_tenant()
    run_id, job_id = run_until_job_queued(owner)
    _claim_without_finishing(job_id)
    monkeypatch.setattr(lost_jobs, "consumers_now", lambda: {"ingestion": ["w1@host"]})

    clock.advance(seconds=901)
    # Its worker holds its only message: sent again at once, whatever waits in the queue.
    assert recover_lost_jobs() == LostJobs(1, 0)
    waiting = queued_messages("ingestion")
    clock.advance(seconds=901)
    # The copy still waits behind the queue's backlog: another would only double it.
    assert recover_lost_jobs() == LostJobs(0, 0)
    assert queued_messages("ingestion") == waiting
    assert count(JobWatch, JobWatch.job_id == job_id, JobWatch.redispatches == 1) == 1

    with get_app().connection_for_write() as connection:
        connection.default_channel.queue_purge("ingestion")  # taken off the queue
    # By a live worker that has not started it yet: it waits there. Running it without
    # renewing its lease is a hang, which does not count.
    copy, none = frozenset([job_id]), frozenset[str]()
    monkeypatch.setattr(BrokerView, "holdings", _holding(reserved=copy, run=none))
    assert recover_lost_jobs() == LostJobs(0, 0)
    # Lost, or held by a hung worker: sent again.
    monkeypatch.setattr(BrokerView, "holdings", _holding(reserved=none, run=copy))
    assert recover_lost_jobs() == LostJobs(1, 0)
    assert queued_messages("ingestion") == 1
    # Nobody reads the queue: the copy waiting there does not hold the job back.
    monkeypatch.setattr(lost_jobs, "consumers_now", lambda: {})
    clock.advance(seconds=901)
    assert recover_lost_jobs() == LostJobs(1, 0)
    assert audit_counts(run_id)["lifecycle_workflow_job_redispatched"] == 3


def _holding(reserved: frozenset[str], run: frozenset[str]) -> Callable[..., WorkerHoldings]:
    """The live workers' answer: the messages they reserved, and those they run if asked."""

    def holdings(
        _view: BrokerView, timeout_s: float = 1.0, *, running: bool = True
    ) -> WorkerHoldings:
        return WorkerHoldings(reserved | run if running else reserved, 1)

    return holdings


def test_after_the_limit_the_job_is_dead_lettered_and_the_run_fails(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIFECYCLE_SWEEP_REDISPATCH_LIMIT", "2")
    reset_settings()
    owner, _ = new_tenant()
    run_id, job_id = run_until_job_queued(owner)

    found = []
    for _ in range(4):
        clock.advance(hours=1, seconds=1)
        found.append(recover_lost_jobs())
    assert found == [LostJobs(1, 0), LostJobs(1, 0), LostJobs(0, 1), LostJobs(0, 0)]

    assert job(job_id).status == "failed"
    assert count(DeadLetter, DeadLetter.job_id == job_id) == 1
    [letter] = list_dead_letters(run_id=run_id)
    # The memory broker's workers are not asked: the reason claims nothing about them.
    assert letter.reason == (
        f"job {job_id} lost: no outcome or heartbeat within 3600 s, 2 re-dispatch(es) did not "
        "help; whether a worker consumes queue 'ingestion' is unknown"
    )
    assert count(JobWatch, JobWatch.job_id == job_id, JobWatch.redispatches == 2) == 1
    [failure] = signals_of(run_id, "job_failed")
    assert failure.envelope["payload"]["error"]["code"] == "job_lost"
    coordinate(run_id)
    run = get_run(owner, run_id)
    assert run.status == "failed" and run.reason and run.reason.startswith("job_lost: job ")
    audits = audit_counts(run_id)
    assert audits["lifecycle_workflow_job_dead_lettered"] == 1
    assert audits["lifecycle_workflow_failed"] == 1
    assert notifications_of(run_id) == {"job.dead_lettered": 1}


def _claim_without_finishing(job_id: str) -> None:
    """A worker took the job (status started) and died before finishing it."""
    from orchestrator.contracts.jobs import JobRequest
    from orchestrator.jobs.runtime import _claim

    _claim(JobRequest.model_validate(job(job_id).request))
    assert job(job_id).status == "started"


def test_a_renewal_interval_not_below_the_lease_is_refused() -> None:
    """Every running job would be taken for lost before its first renewal."""
    with pytest.raises(ValidationError, match=r"HEARTBEAT_INTERVAL_S \(60\) must be below"):
        Settings(job_heartbeat_interval_s=60, sweeps=SweepSettings(job_lease_s=60))
    assert Settings(job_heartbeat_interval_s=59, sweeps=SweepSettings(job_lease_s=60))
