"""A scrape answers even when what it reads does not: a 0/1 gauge says which happened."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

log = logging.getLogger(__name__)


def scraped(name: str, source: str, read: Callable[[], list[Metric]]) -> Iterator[Metric]:
    """`name` (1 when `source` answered this scrape, else 0), then what `read` returned."""
    up = GaugeMetricFamily(name, f"1 when the {source} answered this scrape.")
    try:
        families = read()
    except Exception:
        log.warning("metrics: the %s did not answer", source, exc_info=True)
        up.add_metric([], 0)
        yield up
        return
    up.add_metric([], 1)
    yield up
    yield from families
