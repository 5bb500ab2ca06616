"""Gauges of the broker's queues, read when Prometheus scrapes: how many messages wait in
each queue and how long the oldest has waited.

Read from the broker itself (never consuming), so a queue nobody drains or a broker that
lost its messages shows here while the database still says "queued".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from celery import Celery
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from orchestrator.observability.broker_view import queue_depth
from orchestrator.observability.scrape import scraped


class QueueCollector(Collector):
    def __init__(self, app: Callable[[], Celery], queues: Sequence[str]) -> None:
        self._app = app
        self._queues = tuple(queues)

    def collect(self) -> Iterator[Metric]:
        yield from scraped("lifecycle_broker_scrape_ok", "broker", self._read)

    def _read(self) -> list[Metric]:
        with self._app().connection_for_write() as connection:
            channel = connection.default_channel
            depths = [queue_depth(channel, queue) for queue in self._queues]
        depth = GaugeMetricFamily(
            "lifecycle_queue_messages", "Messages waiting in each queue.", labels=["queue"]
        )
        age = GaugeMetricFamily(
            "lifecycle_queue_oldest_message_age_seconds",
            "How long the message next in line has waited (0 when the queue is empty).",
            labels=["queue"],
        )
        for queue in depths:
            depth.add_metric([queue.queue], queue.messages)
            age.add_metric([queue.queue], queue.oldest_age_s or 0.0)
        return [depth, age]
