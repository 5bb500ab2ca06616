"""RabbitMQ connections dropped in the middle of a publish (a proxy between every process
and a private node cuts chosen publishes after the broker has the whole message and before
the publisher sees its confirm): the producer's wake-ups, the coordinator's jobs and the
jobs' outcomes. The publisher sends again or leaves the outbox row to the sweep; the broker
may then hold the message twice. Every run completes, each step once, each job's outcome
once, nothing dead-lettered."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.engine.test_fault_rabbitmq import (  # noqa: F401 (fixtures)
    _each_step_once,
    _outcomes_per_job,
    fast_sweeps,
)
from tests.support.amqp_cutter import PublishCutter
from tests.support.faults import Reviewers, beat, dead_letters
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.rabbitmq import PrivateRabbitMQ, private_rabbitmq  # noqa: F401 (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.rabbitmq, pytest.mark.faults]
#: Which publishes to the fleet's queues are cut (1-based, over every process): three
#: runs publish about 57; these fall on starts, jobs and outcomes of the first steps.
CUT = (1, 4, 8, 13, 19, 26)


@pytest.fixture
def cutter(private_rabbitmq: PrivateRabbitMQ) -> Iterator[PublishCutter]:  # noqa: F811
    proxy = PublishCutter(private_rabbitmq.port, CUT)
    yield proxy
    proxy.close()


@pytest.fixture
def broker_url(cutter: PublishCutter) -> str:
    """Every process of this module's fleets, the test's producer too, goes through it."""
    return cutter.url()


def test_publishes_cut_before_their_confirm_are_neither_lost_nor_doubled(
    fast_sweeps: None,  # noqa: F811
    fleet: Fleet,
    cutter: PublishCutter,
    tmp_path: Path,
) -> None:
    fleet.start("orchestrator", concurrency=2)
    fleet.start("ingestion,kb_index,analysis,reporting", concurrency=2)
    owner, reviewer = new_tenant()
    with beat(fleet, tmp_path):
        run_ids = [start_assessment(owner, documents=1).id for _ in range(3)]
        finals = Reviewers(reviewer).drive(run_ids, timeout_s=300)

    assert {run.status for run in finals.values()} == {"completed"}, finals
    assert len(cutter.cut) == len(CUT), cutter.cut
    # The broker had confirmed messages the publisher never heard of: they were sent again.
    assert cutter.confirmed_before_cut >= 1
    _each_step_once(run_ids)
    assert set(_outcomes_per_job(run_ids).values()) == {1}
    assert dead_letters(run_ids) == 0
