"""Driving runs synchronously with a movable clock, and reading what the sweeps did.

No worker: the test applies signals with the coordinator and runs queued jobs with the
instant job body, in this process. Messages the code sends go to the configured broker
and are counted or ignored, never consumed.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.clock import set_clock, utcnow
from orchestrator.contracts.events import RUN_EVENTS, NotificationEvent, event_id
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.jobs import JobRequest
from orchestrator.db.models import AuditEvent, InboxSignal, Job
from orchestrator.db.ops_models import (
    DeliveryAttempt,
    Notification,
    NotificationDelivery,
    SweepMark,
)
from orchestrator.db.session import transaction
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.engine.coordinator import coordinate
from orchestrator.engine.tenant_events import notify
from orchestrator.jobs.interface import JobService
from orchestrator.jobs.runtime import Delivery, run_job
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import create_assessment, get_run, start_lifecycle
from orchestrator.service.read_models import RunView
from orchestrator.testing.instant_jobs import instant_service
from tests.support.roles import grant

T0 = datetime(2030, 1, 7, 9, 0, tzinfo=UTC)


@dataclass
class Clock:
    """The time every `utcnow()` returns; tests move it instead of sleeping."""

    now: datetime = T0

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


def installed_clock(start: datetime = T0) -> Iterator[Clock]:
    clock = Clock(start)
    set_clock(lambda: clock.now)
    reset_settings()
    reset_settings()
    try:
        yield clock
    finally:
        set_clock(None)
        reset_settings()
        reset_settings()


def no_kick(_: uuid.UUID) -> None:
    """The test applies signals itself."""


def new_tenant() -> tuple[Actor, Actor]:
    tenant = f"tenant-{uuid.uuid4().hex[:8]}"
    return (
        Actor(tenant, "user:owner@example.org"),
        grant(Actor(tenant, "user:reviewer@example.org")),
    )


def start_run(owner: Actor) -> uuid.UUID:
    assessment = create_assessment(owner, "org-1", "Sweep test assessment")
    upload_document(
        owner,
        assessment.id,
        "policy.md",
        b"# Access policy\n\nAccess is reviewed every quarter.",
        kick=no_kick,
    )
    return start_lifecycle(owner, assessment.id, f"start-{assessment.id}", kick=no_kick).id


def run_queued_jobs(run_id: uuid.UUID, service: JobService = instant_service) -> int:
    """Run the run's queued jobs with `service` (instant ones by default)."""
    with transaction() as session:
        requests = [
            JobRequest.model_validate(job.request)
            for job in session.scalars(
                select(Job).where(Job.run_id == run_id, Job.status == "queued")
            )
        ]
    for request in requests:
        run_job(Delivery(request, retries_left=True), service)
    return len(requests)


def drive_to(reviewer: Actor, run_id: uuid.UUID, step: str, max_rounds: int = 60) -> RunView:
    """Apply signals, run jobs and answer waits until the run stands at `step`, waiting."""
    answers = ScriptedReviewer(reviewer)
    for _ in range(max_rounds):
        coordinate(run_id)
        run = get_run(reviewer, run_id)
        if run.current_step == step and run.status.startswith("waiting"):
            return run
        if not run_queued_jobs(run_id) and not answers.answer(run):
            raise AssertionError(f"run stuck at {run.status} {run.current_step}")
    raise AssertionError(f"run never reached {step}")


def run_until_job_queued(owner: Actor) -> tuple[uuid.UUID, str]:
    """A run whose first job (ingestion) is queued; its message is ours to lose."""
    run_id = start_run(owner)
    coordinate(run_id)
    return run_id, f"{run_id}:ingest_documents:1"


def audit_counts(run_id: uuid.UUID) -> Counter[str]:
    with transaction() as session:
        return Counter(
            session.scalars(select(AuditEvent.event_type).where(AuditEvent.run_id == run_id))
        )


def audits_of(run_id: uuid.UUID, event_type: str) -> list[AuditEvent]:
    with transaction() as session:
        return list(
            session.scalars(
                select(AuditEvent)
                .where(AuditEvent.run_id == run_id, AuditEvent.event_type == event_type)
                .order_by(AuditEvent.id)
            )
        )


def marks_of(run_id: uuid.UUID) -> Counter[tuple[str, str]]:
    with transaction() as session:
        rows = session.execute(
            select(SweepMark.mark, SweepMark.key).where(SweepMark.run_id == run_id)
        ).all()
    return Counter((mark, key) for mark, key in rows)


#: The run's transitions are told too (orchestrator.engine.run_events): not the sweeps'.
_TRANSITIONS = sorted(event.value for event in RUN_EVENTS)


def notifications_of(run_id: uuid.UUID) -> Counter[str]:
    """The sweeps' notifications of the run."""
    with transaction() as session:
        return Counter(
            session.scalars(
                select(Notification.event_type).where(
                    Notification.run_id == run_id, Notification.event_type.not_in(_TRANSITIONS)
                )
            )
        )


def deliveries_of(run_id: uuid.UUID) -> list[NotificationDelivery]:
    """The deliveries of the sweeps' notifications of the run."""
    with transaction() as session:
        return list(
            session.scalars(
                select(NotificationDelivery)
                .join(Notification, Notification.id == NotificationDelivery.notification_id)
                .where(Notification.run_id == run_id, Notification.event_type.not_in(_TRANSITIONS))
            )
        )


def signals_of(run_id: uuid.UUID, signal_type: str) -> list[InboxSignal]:
    with transaction() as session:
        return list(
            session.scalars(
                select(InboxSignal).where(
                    InboxSignal.run_id == run_id, InboxSignal.type == signal_type
                )
            )
        )


def job(job_id: str) -> Job:
    with transaction() as session:
        row = session.get(Job, job_id)
        assert row is not None
        return row


def count(model: Any, *where: Any) -> int:
    with transaction() as session:
        return int(session.scalar(select(func.count()).select_from(model).where(*where)) or 0)


def notify_stale(tenant_id: str, occasion: str) -> list[int]:
    """A run-stale notification of the tenant's (its event id from `occasion`); the ids of
    the deliveries it made."""
    with transaction() as session:
        return notify(
            session,
            event_id=event_id(occasion),
            tenant_id=tenant_id,
            run_id=uuid.uuid4(),
            event=NotificationEvent.RUN_STALE,
            payload={"n": 1},
            now=utcnow(),
        )


def delivery_attempts(delivery_id: int) -> list[DeliveryAttempt]:
    """A delivery's attempts, in their order."""
    with transaction() as session:
        return list(
            session.scalars(
                select(DeliveryAttempt)
                .where(DeliveryAttempt.delivery_id == delivery_id)
                .order_by(DeliveryAttempt.attempt)
            )
        )
