"""Two sweeps at once on PostgreSQL: every effect happens once.

Each test prepares due work, then runs the same sweep in two threads released together
(each with its own connection), and counts the effects in the database and in Redis.
"""

from __future__ import annotations

import base64
import itertools
import json
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from typing import TypeVar

import pytest
import redis
from sqlalchemy import select, update

from orchestrator.config.settings import get_settings, reset_settings
from orchestrator.contracts.jobs import JobRequest
from orchestrator.db.models import Job, OutboxMessage
from orchestrator.db.ops_models import DeadLetter, DeliveryAttempt, JobWatch, SweepMark
from orchestrator.db.session import transaction
from orchestrator.jobs import heartbeat as leases
from orchestrator.jobs.heartbeat import heartbeat, lease
from orchestrator.jobs.runtime import _claim
from orchestrator.notifications.delivery import deliver
from orchestrator.notifications.subscriptions import subscribe
from orchestrator.sweeps import (
    publish_stale_outbox,
    recover_lost_jobs,
    rekick_pending_runs,
    sweep_approval_waits,
    sweep_sla,
    sweep_stale,
)
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.sweeps import (
    T0,
    Clock,
    audit_counts,
    count,
    deliveries_of,
    drive_to,
    installed_clock,
    job,
    new_tenant,
    notifications_of,
    run_until_job_queued,
    signals_of,
    start_run,
)
from tests.support.webhook_receiver import webhook_receiver

T = TypeVar("T")
RUNS = 4


_epochs = itertools.count(1)


@pytest.fixture
def clock(fleet: Fleet) -> Iterator[Clock]:
    """Each test starts later than the last one ended: the database (and the sweeps'
    cursors in it) lives for the whole session, and time only moves forward."""
    yield from installed_clock(T0 + timedelta(days=200 * next(_epochs)))


def marks_made(mark: str) -> Callable[[], int]:
    before = count(SweepMark, SweepMark.mark == mark)
    return lambda: count(SweepMark, SweepMark.mark == mark) - before


@pytest.fixture
def broker_messages(broker_url: str) -> Iterator[Callable[[str], Counter[str]]]:
    """Messages waiting in a Redis queue (kombu's list of each priority step), by what they
    name: a job's task id, or the run a coordinate message wakes."""
    client = redis.Redis.from_url(broker_url)

    def named(queue: str) -> Counter[str]:
        names: Counter[str] = Counter()
        steps = ["", *(f"\x06\x16{step}" for step in (3, 6, 9))]
        for raw in (m for step in steps for m in client.lrange(f"{queue}{step}", 0, -1)):
            message = json.loads(raw)
            if message["headers"]["task"] == "orchestrator.coordinate":
                args = json.loads(base64.b64decode(message["body"]))[0]
                names[args[0]] += 1
            else:
                names[message["headers"]["id"]] += 1
        return names

    yield named
    client.close()


def twice_at_once(sweep: Callable[[], T]) -> list[T]:
    """Run `sweep` in two threads released at the same moment; re-raise any error."""
    barrier = threading.Barrier(2)
    results: list[T] = []
    errors: list[BaseException] = []

    def go() -> None:
        barrier.wait()
        try:
            results.append(sweep())
        except BaseException as error:  # surfaced below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=go) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    return results


@pytest.mark.broker_matrix
def test_approval_stages_fire_once_per_wait(clock: Clock) -> None:
    owner, reviewer = new_tenant()
    subscribe(owner, "https://hooks.example.org/a")
    runs = [start_run(owner) for _ in range(RUNS)]
    for run_id in runs:
        drive_to(reviewer, run_id, "wait_for_soa_approval")
    clock.advance(days=8)
    made = {stage: marks_made(stage) for stage in ("reminded", "escalated", "approval_blocked")}

    fired = twice_at_once(sweep_approval_waits)

    for stage, made_now in made.items():
        assert sum(f[stage] for f in fired) == made_now() >= RUNS
    for run_id in runs:
        audits = audit_counts(run_id)
        assert audits["lifecycle_workflow_approval_reminder_sent"] == 1
        assert audits["lifecycle_workflow_approval_escalated"] == 1
        assert len(signals_of(run_id, "assessment_blocked")) == 1
        assert notifications_of(run_id) == {
            "approval.reminder": 1,
            "approval.escalated": 1,
            "approval.blocked": 1,
        }
        assert len(deliveries_of(run_id)) == 3


@pytest.mark.broker_matrix
def test_sla_and_staleness_fire_once_per_run(clock: Clock) -> None:
    owner, _ = new_tenant()
    runs = [start_run(owner) for _ in range(RUNS)]
    clock.advance(days=31)

    breached, stale = marks_made("sla_breached"), marks_made("stale")
    assert sum(twice_at_once(sweep_sla)) == breached() >= RUNS
    assert sum(twice_at_once(sweep_stale)) == stale() >= RUNS
    for run_id in runs:
        audits = audit_counts(run_id)
        assert audits["lifecycle_workflow_sla_breached"] == 1
        assert audits["lifecycle_workflow_stale"] == 1
        assert count(SweepMark, SweepMark.run_id == run_id) == 2


def test_lost_jobs_are_redispatched_once_then_dead_lettered_once(
    clock: Clock, broker_messages: Callable[[str], Counter[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    owner, _ = new_tenant()
    jobs = [run_until_job_queued(owner) for _ in range(RUNS)]
    before = broker_messages("ingestion")
    clock.advance(hours=1, seconds=1)

    found = twice_at_once(recover_lost_jobs)

    sent = broker_messages("ingestion") - before
    assert sum(f.redispatched for f in found) == sent.total()
    for run_id, job_id in jobs:
        assert sent[job_id] == 1
        assert audit_counts(run_id)["lifecycle_workflow_job_redispatched"] == 1

    monkeypatch.setenv("LIFECYCLE_SWEEP_REDISPATCH_LIMIT", "1")
    reset_settings()
    clock.advance(hours=1, seconds=1)
    found = twice_at_once(recover_lost_jobs)

    assert sum(f.dead_lettered for f in found) >= RUNS
    assert broker_messages("ingestion") - before == sent, "giving up sends nothing"
    for run_id, job_id in jobs:
        assert count(DeadLetter, DeadLetter.job_id == job_id) == 1
        assert len(signals_of(run_id, "job_failed")) == 1
        assert audit_counts(run_id)["lifecycle_workflow_job_dead_lettered"] == 1


@pytest.mark.broker_matrix
def test_a_running_job_is_never_taken_for_lost(clock: Clock) -> None:
    """The job runtime holds the job's row lock while it works: SKIP LOCKED passes it by,
    and its heartbeat (no foreign key to the locked row) does not wait for that lock."""
    owner, _ = new_tenant()
    _, job_id = run_until_job_queued(owner)
    with transaction() as session:
        session.execute(update(Job).where(Job.id == job_id).values(status="started"))
    clock.advance(hours=2)
    holding, release = threading.Event(), threading.Event()

    def working_job() -> None:
        with transaction() as session:
            session.scalar(select(Job).where(Job.id == job_id).with_for_update())
            holding.set()
            release.wait(30)

    worker = threading.Thread(target=working_job)
    worker.start()
    try:
        assert holding.wait(10)
        assert heartbeat(job_id, min_interval_s=0)
        recover_lost_jobs()
        assert redispatches(job_id) == 0, "a locked (running) job is skipped"
    finally:
        release.set()
        worker.join(30)
    recover_lost_jobs()
    assert redispatches(job_id) == 0, "its heartbeat is recent"
    clock.advance(seconds=901)
    recover_lost_jobs()
    assert redispatches(job_id) == 1


def test_a_jobs_lease_runs_from_its_claim_without_a_write_of_its_own(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entering the lease writes nothing (the claim's stamp is its first beat: a job shorter
    than one renewal interval costs no heartbeat transaction); the sweep still takes the
    job for lost once the lease passes from the claim without a renewal."""
    owner, _ = new_tenant()
    _, job_id = run_until_job_queued(owner)
    caller = threading.current_thread()
    beats: list[list[str]] = []
    written = leases._beat

    def recorded(job_ids: Iterable[str]) -> None:
        ids = list(job_ids)
        if threading.current_thread() is caller:  # not the process's renewer thread
            beats.append(ids)
        written(ids)

    monkeypatch.setattr(leases, "_beat", recorded)
    assert _claim(JobRequest.model_validate(job(job_id).request)).value == "succeeded"
    with lease(job_id, renew_for_s=900):
        assert beats == [], "the lease's start writes no heartbeat"
        assert job_id in leases.held_leases()
    assert count(JobWatch, JobWatch.job_id == job_id) == 0

    clock.advance(seconds=get_settings().sweeps.job_lease_s - 1)
    recover_lost_jobs()
    assert redispatches(job_id) == 0, "within the lease counted from the claim"
    clock.advance(seconds=2)
    recover_lost_jobs()
    assert redispatches(job_id) == 1, "no renewal came within the lease"


def redispatches(job_id: str) -> int:
    with transaction() as session:
        return session.scalar(select(JobWatch.redispatches).where(JobWatch.job_id == job_id)) or 0


def test_outbox_and_inbox_recovery_send_each_message_once(
    clock: Clock, broker_messages: Callable[[str], Counter[str]]
) -> None:
    owner, _ = new_tenant()
    runs = [str(start_run(owner)) for _ in range(RUNS)]  # start signals pending, no kicks
    kicks_before = broker_messages("orchestrator")
    clock.advance(seconds=11)
    kicked = sum(twice_at_once(rekick_pending_runs))
    kicks = broker_messages("orchestrator") - kicks_before
    assert kicked == kicks.total() and all(kicks[run_id] == 1 for run_id in runs)

    jobs = [run_until_job_queued(owner) for _ in range(RUNS)]
    with transaction() as session:
        session.execute(
            update(OutboxMessage)
            .where(OutboxMessage.run_id.in_([run_id for run_id, _ in jobs]))
            .values(published_at=None)
        )
    queues = ("ingestion", "kb_index", "analysis", "reporting")
    before = sum((broker_messages(queue) for queue in queues), Counter())
    clock.advance(seconds=11)
    published = sum(twice_at_once(publish_stale_outbox))
    sent = sum((broker_messages(queue) for queue in queues), Counter()) - before
    # Rows left unclaimed by earlier tests (no worker runs here) are due too: every due
    # row is sent once, this test's among them.
    assert published == sent.total() and all(sent[job_id] == 1 for _, job_id in jobs)
    assert set(sent.values()) == {1}


@pytest.mark.broker_matrix
def test_a_delivery_is_posted_once_by_two_workers(clock: Clock) -> None:
    owner, reviewer = new_tenant()
    with webhook_receiver() as receiver:
        subscribe(owner, receiver.url)
        run_id = start_run(owner)
        clock.advance(days=31)
        sweep_sla()
        [delivery] = deliveries_of(run_id)
        outcomes = twice_at_once(lambda: deliver(delivery.id))
    assert sorted(str(outcome) for outcome in outcomes) == ["None", "delivered"]
    assert len(receiver.received) == 1
    assert count(DeliveryAttempt, DeliveryAttempt.delivery_id == delivery.id) == 1
    assert uuid.UUID(receiver.received[0].headers["X-Lifecycle-Event-Id"])
