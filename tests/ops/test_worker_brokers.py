"""Each pytest-xdist worker's broker: its own Redis database or RabbitMQ vhost, so fleets run
in parallel on either broker (CI runs the RabbitMQ matrix with -n), and a vhost the server
lacks fails with the commands that add it."""

from __future__ import annotations

import os

import pytest
from kombu import Connection

from tests.support.fleet import emptied, worker_broker

RABBITMQ = "amqp://guest:guest@127.0.0.1:5672/ci-lifecycle"


@pytest.mark.parametrize(
    ("url", "worker", "expected"),
    [
        ("redis://127.0.0.1:6379/15", None, "redis://127.0.0.1:6379/15"),
        ("redis://127.0.0.1:6379/15", "gw0", "redis://127.0.0.1:6379/15"),
        ("redis://127.0.0.1:6379/15", "gw1", "redis://127.0.0.1:6379/14"),
        (RABBITMQ, None, RABBITMQ),
        (RABBITMQ, "gw0", RABBITMQ),
        (RABBITMQ, "gw1", RABBITMQ + "-gw1"),
        ("amqp://guest:guest@127.0.0.1:5672//", "gw2", "amqp://guest:guest@127.0.0.1:5672/%2F-gw2"),
    ],
)
def test_each_worker_past_the_first_has_a_broker_of_its_own(
    url: str, worker: str | None, expected: str
) -> None:
    assert worker_broker(url, worker) == expected


def test_the_vhost_is_the_one_kombu_connects_to() -> None:
    assert Connection(worker_broker(RABBITMQ, "gw1")).virtual_host == "ci-lifecycle-gw1"
    root = worker_broker("amqp://guest:guest@127.0.0.1:5672//", "gw1")
    assert Connection(root).virtual_host == "/-gw1"


def test_redis_databases_run_out_with_a_reason() -> None:
    with pytest.raises(RuntimeError, match="no Redis database left for xdist worker gw2"):
        worker_broker("redis://127.0.0.1:6379/1", "gw2")


@pytest.mark.integration
def test_a_missing_vhost_fails_with_the_commands_that_add_it() -> None:
    url = os.environ.get("LIFECYCLE_TEST_RABBITMQ_URL")
    if not url:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but LIFECYCLE_TEST_RABBITMQ_URL is unset")
        pytest.skip("needs LIFECYCLE_TEST_RABBITMQ_URL (a RabbitMQ vhost URL)")
    missing = worker_broker(url, "gw999")
    with pytest.raises(pytest.fail.Exception) as failed:
        emptied(missing)
    vhost = Connection(missing).virtual_host
    assert f"rabbitmqctl add_vhost {vhost}`" in str(failed.value)
    assert "not found" in str(failed.value)
