"""A worker's first start on a fresh RabbitMQ vhost logs no error: the fleet's queues and
exchanges are declared before Celery's native delayed delivery binds them (it used to log
"Failed to bind queue … no exchange" once per queue)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.rabbitmq import PrivateRabbitMQ

pytestmark = [pytest.mark.integration, pytest.mark.rabbitmq, pytest.mark.faults]


@pytest.fixture
def private_rabbitmq(services: tuple[str, str], tmp_path: Path) -> Iterator[PrivateRabbitMQ]:
    (tmp_path / "rabbitmq").mkdir()
    node = PrivateRabbitMQ(tmp_path / "rabbitmq")
    node.start()
    yield node
    node.stop()


@pytest.fixture
def broker_url(private_rabbitmq: PrivateRabbitMQ) -> str:
    """A node of its own: its vhost has never seen the fleet's queues."""
    return private_rabbitmq.url


def test_a_first_worker_on_a_fresh_vhost_binds_without_errors(fleet: Fleet) -> None:
    name = fleet.start("ingestion", concurrency=1)
    log = fleet.log_of(name)
    assert "Failed to bind queue" not in log, log[-3000:]
    assert "no exchange" not in log and "Failed to setup delayed delivery" not in log
