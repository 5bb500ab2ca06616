"""A dead letter's reason says whether any live worker consumes the job's queue, asked of
real worker processes: re-dispatching cannot help a queue nobody consumes."""

from __future__ import annotations

import pytest
import redis

from orchestrator.engine.messages import get_app
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.cli import add_consumer, give_up_on, job_status
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import wait_for


@pytest.mark.broker_matrix
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
