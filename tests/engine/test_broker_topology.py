"""The app's declarations per broker: quorum queues and confirms on RabbitMQ only."""

from __future__ import annotations

import pytest

from orchestrator.config.settings import Settings
from orchestrator.engine.celery_app import create_app
from orchestrator.engine.routing import QUEUES

RABBITMQ = "amqp://guest:guest@127.0.0.1:5672/fleet"
REDIS = "redis://127.0.0.1:6379/0"


def test_on_rabbitmq_every_queue_is_a_durable_quorum_queue_behind_a_topic_exchange() -> None:
    app = create_app(Settings(broker_url=RABBITMQ))

    queues = {queue.name: queue for queue in app.conf.task_queues}
    assert set(queues) == set(QUEUES)
    for queue in queues.values():
        assert queue.queue_arguments == {"x-queue-type": "quorum"}
        assert queue.durable and queue.exchange.type == "topic" and queue.exchange.durable
    assert app.conf.broker_transport_options == {"confirm_publish": True}
    assert app.conf.task_default_queue_type == "quorum"
    assert app.conf.worker_detect_quorum_queues is True
    assert app.conf.task_default_delivery_mode == "persistent"
    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost
    assert app.conf.worker_prefetch_multiplier == 1
    # No prefetch reduction after a reconnect: its restore from a pool thread desynchronised
    # the consumer's connection (test_fault_rabbitmq's restarts hung a worker for minutes).
    assert app.conf.worker_enable_prefetch_count_reduction is False


@pytest.mark.parametrize("url", [REDIS, "memory://localhost/"])
def test_other_brokers_keep_classic_declarations(url: str) -> None:
    app = create_app(Settings(broker_url=url))

    assert all(not queue.queue_arguments for queue in app.conf.task_queues)
    assert "confirm_publish" not in app.conf.broker_transport_options
    assert app.conf.task_default_queue_type == "classic"
    assert app.conf.worker_enable_prefetch_count_reduction is True
