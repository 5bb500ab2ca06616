"""Declare the fleet's queues and their exchanges when a worker starts on RabbitMQ.

Celery's native delayed delivery binds every queue's exchange to `celery_delayed_delivery`
before the consumer has declared them: on a fresh vhost each bind then fails ("NOT_FOUND -
no exchange") and is logged as an error, though the consumer declares them a moment later.
Declaring them first (idempotent, with the same arguments) makes the bind find them.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.signals import worker_init

from orchestrator.engine.broker_topology import is_amqp

log = logging.getLogger(__name__)


def declare_all(app: Any) -> int:
    """Declare every queue the app knows (its exchange and binding too); how many."""
    queues = list(app.amqp.queues.values())
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        for queue in queues:
            queue.bind(channel).declare()
    return len(queues)


@worker_init.connect
def _declare_before_delayed_delivery(sender: Any = None, **_: Any) -> None:
    app = getattr(sender, "app", None)
    if app is None or not is_amqp(str(app.conf.broker_url)):
        return
    try:
        declare_all(app)
    except Exception as error:  # the consumer declares them too once the broker answers
        log.warning("could not declare the queues before starting: %s", error)
