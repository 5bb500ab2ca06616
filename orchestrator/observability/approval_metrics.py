"""Read at scrape time from the database, like the state gauges: how long each gate's
drafts waited for the approval that opened it, and how long ago beat last swept.

`lifecycle_approval_wait_seconds{gate}`: a histogram of the time from a draft's creation
to the approval that opened its gate (the last approval its signoff policy counted), over
every approved draft. `lifecycle_beat_last_sweep_age_seconds`: since the newest start of
a scheduled sweep (absent until beat has swept once).
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.db.effect_models import SweepRun
from orchestrator.db.models import ApprovalEvent, Artifact
from orchestrator.db.session import read_transaction
from orchestrator.db.sql import aware
from orchestrator.observability.scrape import scraped

#: The article's buckets (1 min ... 1 h), then the days a human approval may take.
APPROVAL_BUCKETS = (60, 300, 600, 1800, 3600, 4 * 3600, 86400, 3 * 86400, 7 * 86400, 30 * 86400)


class ApprovalCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        yield from scraped("lifecycle_approval_scrape_ok", "database", _read)


def _read() -> list[Metric]:
    with read_transaction() as session:
        return [_approval_waits(session), *_beat_age(session)]


def _approval_waits(session: Session) -> Metric:
    opened = (
        select(Artifact.kind, Artifact.created_at, func.max(ApprovalEvent.consumed_at))
        .join(ApprovalEvent, ApprovalEvent.artifact_id == Artifact.id)
        .where(
            Artifact.status == "approved",
            ApprovalEvent.decision == "approved",
            ApprovalEvent.consumed_at.is_not(None),
        )
        .group_by(Artifact.id, Artifact.kind, Artifact.created_at)
    )
    waits: dict[str, list[float]] = {}
    for gate, drafted, approved in session.execute(opened):
        if approved is not None:
            waited = max((aware(approved) - aware(drafted)).total_seconds(), 0.0)
            waits.setdefault(gate, []).append(waited)
    family = HistogramMetricFamily(
        "lifecycle_approval_wait_seconds",
        "Time from a draft to the approval that opened its gate, by gate.",
        labels=["gate"],
    )
    for gate, seconds in sorted(waits.items()):
        buckets = [(str(float(b)), float(sum(s <= b for s in seconds))) for b in APPROVAL_BUCKETS]
        family.add_metric([gate], [*buckets, ("+Inf", float(len(seconds)))], sum_value=sum(seconds))
    return family


def _beat_age(session: Session) -> list[Metric]:
    last = session.scalar(select(func.max(SweepRun.last_started_at)))
    if last is None:
        return []
    age = max((utcnow() - aware(last)).total_seconds(), 0.0)
    return [
        GaugeMetricFamily(
            "lifecycle_beat_last_sweep_age_seconds",
            "Seconds since a scheduled sweep last started (beat's pulse).",
            value=age,
        )
    ]
