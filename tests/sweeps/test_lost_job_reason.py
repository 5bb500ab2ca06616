"""A dead letter's reason says whether any live worker consumes the job's queue, asked of
real worker processes: re-dispatching cannot help a queue nobody consumes."""

from __future__ import annotations

import pytest
import redis

from orchestrator.config.settings import reset_settings
from orchestrator.engine.messages import get_app
from orchestrator.service.dead_letters import DeadLetterView, list_dead_letters
from orchestrator.sweeps import recover_lost_jobs
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.cli import GIVE_UP_AT_ONCE, add_consumer, job_status
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import poll, wait_for


def give_up_on(run_id: object, monkeypatch: pytest.MonkeyPatch) -> DeadLetterView:
    """Run the lost-jobs sweep here with no re-dispatch until the run's job is dead-lettered."""

    def letters() -> list[DeadLetterView]:
        recover_lost_jobs()
        return [d for d in list_dead_letters(include_replayed=True) if d.run_id == run_id]

    with monkeypatch.context() as patch:
        for key, value in GIVE_UP_AT_ONCE.items():
            patch.setenv(key, value)
        reset_settings()
        [letter] = poll(letters, bool, timeout_s=10, what="the job dead-lettered")
    reset_settings()
    return letter


def test_a_job_lost_on_a_queue_nobody_consumes_says_so(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet.start("orchestrator")  # nobody consumes ingestion
    owner, _ = new_tenant()
    run = start_assessment(owner, documents=1)
    job_id = f"{run.id}:ingest_documents:1"
    wait_for(lambda: job_status(job_id) == "queued", what="the ingestion job queued")

    letter = give_up_on(run.id, monkeypatch)

    assert letter.reason == (
        f"job {job_id} lost: no worker consumes queue 'ingestion' "
        "(no outcome or heartbeat within 0.001 s, 0 re-dispatch(es))"
    )
    with get_app().connection_for_write() as connection:  # the stale message is this test's
        connection.default_channel.queue_purge("ingestion")


def test_a_job_lost_on_a_consumed_queue_names_its_consumers(
    fleet: Fleet, broker_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The broker lost the message; a worker does consume the queue: no "no worker"."""
    worker = fleet.start("orchestrator")
    owner, _ = new_tenant()
    run = start_assessment(owner, documents=1)
    job_id = f"{run.id}:ingest_documents:1"
    broker = redis.Redis.from_url(broker_url)
    wait_for(
        lambda: any(job_id.encode() in m for m in broker.lrange("ingestion", 0, -1)),
        what="the ingestion job's message in its queue",
    )
    broker.delete("ingestion")  # the broker loses it
    broker.close()
    add_consumer("ingestion", worker)

    letter = give_up_on(run.id, monkeypatch)

    assert "no worker" not in letter.reason
    assert letter.reason == (
        f"job {job_id} lost: no outcome or heartbeat within 0.001 s, 0 re-dispatch(es) did not "
        f"help; queue 'ingestion' is consumed by {worker}"
    )
