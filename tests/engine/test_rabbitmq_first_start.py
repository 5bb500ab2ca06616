"""A worker's first start on a fresh RabbitMQ vhost logs no error: the fleet's queues and
exchanges are declared before Celery's native delayed delivery binds them (it used to log
"Failed to bind queue … no exchange" once per queue)."""

from __future__ import annotations

import pytest

from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support import rabbitmq

pytestmark = [pytest.mark.integration, pytest.mark.rabbitmq, pytest.mark.faults]
# A node of its own: its vhost has never seen the fleet's queues.
private_rabbitmq = rabbitmq.private_rabbitmq
broker_url = rabbitmq.broker_url


def test_a_first_worker_on_a_fresh_vhost_binds_without_errors(fleet: Fleet) -> None:
    name = fleet.start("ingestion", concurrency=1)
    log = fleet.log_of(name)
    assert "Failed to bind queue" not in log, log[-3000:]
    assert "no exchange" not in log and "Failed to setup delayed delivery" not in log
