"""Lost job messages at the product's default settings: found and sent again in seconds.

Real worker processes, a real `celery beat` with the default sweep intervals, deadlines and
visibility timeout, and a private Redis server. Four faults, each while jobs are queued:
a backlog nobody consumes yet (it must wait, never doubled), FLUSHALL, Redis restarted
empty, and a worker killed between its commit and its send. The test prints, per run, the
seconds from the broker answering (or the process dying) to the job starting.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import redis
from sqlalchemy import select

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.jobs import JobKind
from orchestrator.contracts.steps import STEP_ORDER
from orchestrator.db.models import AuditEvent, Job
from orchestrator.db.session import transaction
from orchestrator.engine.messages import get_app
from orchestrator.engine.routing import ROUTES
from orchestrator.sweeps.missing_messages import MESSAGE_MISSING
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support import private_broker
from tests.support.faults import DEFAULT_REDELIVERY, Reviewers, beat, dead_letters
from tests.support.fleet_runs import new_tenant, start_assessment, step_counts
from tests.support.polling import poll
from tests.support.private_services import PrivateRedis

pytestmark = [pytest.mark.integration, pytest.mark.faults]
# This module's fleets use a private Redis server (fixtures shared with other fault tests).
private_redis = private_broker.private_redis
broker_url = private_broker.broker_url
RUNS = 3
HEAVY = "ingestion,kb_index,analysis,reporting"
COORDINATION = "orchestrator,notifications"
TARGET_S = 30.0
_CHECKED = re.compile(r"sweep_missing_messages\[[^\]]+\] succeeded in [^:]+: (\{[^}]*\})")


@pytest.fixture
def defaults(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, value in DEFAULT_REDELIVERY.items():
        monkeypatch.setenv(name, value)
        fleet.env[name] = value
    for name in [n for n in fleet.env if n.startswith("LIFECYCLE_SWEEP_")]:
        fleet.env.pop(name)
    reset_settings()
    yield
    reset_settings()


def _jobs(run_ids: list[uuid.UUID], step: str | None = None) -> list[Job]:
    with transaction() as session:
        query = select(Job).where(Job.run_id.in_(run_ids))
        if step is not None:
            query = query.where(Job.step == step)
        return list(session.scalars(query))


def _queued_jobs(run_ids: list[uuid.UUID], step: str, broker: redis.Redis) -> list[str]:
    """The ids of every run's job of `step`, once each is queued and its message waits in
    its queue: the coordinator sends after its commit, later on a loaded machine, and a
    fault before the send would lose nothing."""
    jobs = poll(
        lambda: _jobs(run_ids, step),
        lambda jobs: len(jobs) == len(run_ids) and all(j.status == "queued" for j in jobs),
        timeout_s=120,
        what=f"every run's {step} job queued",
    )
    queue = ROUTES[JobKind(jobs[0].kind)].queue
    poll(
        lambda: _waiting(broker, queue),
        lambda waiting: waiting >= len(run_ids),
        timeout_s=60,
        what=f"the {step} jobs' messages in their queue",
    )
    return [job.id for job in jobs]


def _started(
    job_ids: list[str],
    since: float,
    what: str,
    reviewers: Reviewers | None = None,
    run_ids: list[uuid.UUID] | None = None,
) -> list[float]:
    """Seconds from `since` to each job's start, once all have started."""

    def observe() -> list[datetime | None]:
        if reviewers is not None and run_ids is not None:
            reviewers.step(run_ids)
        with transaction() as session:
            return list(session.scalars(select(Job.started_at).where(Job.id.in_(job_ids))))

    started = poll(
        observe,
        lambda at: len(at) == len(job_ids) and all(a is not None for a in at),
        timeout_s=120,
        what=what,
    )
    return [at.timestamp() - since for at in started if at is not None]


def _app_reconnected() -> bool:
    """This process's pooled broker connections died with the server: one call fails."""
    try:
        get_app().control.ping(timeout=0.2)
    except Exception:
        return False
    return True


def _looked_at_all(check: str) -> bool:
    found = re.search(r"'checked': (\d+)", check)
    return found is not None and int(found.group(1)) >= RUNS and "'resent': 0" in check


def _resends(job_ids: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(job_ids, 0)
    with transaction() as session:
        for event in session.scalars(
            select(AuditEvent).where(
                AuditEvent.event_type == AuditEventType.LIFECYCLE_WORKFLOW_JOB_REDISPATCHED.value
            )
        ):
            job_id = event.event_metadata.get("job_id")
            if job_id in counts and event.event_metadata.get("reason") == MESSAGE_MISSING:
                counts[job_id] += 1
    return counts


def _lists(queue: str) -> list[str]:
    """A queue's Redis lists: kombu keeps one per priority step (the tenant order puts a
    tenant's backlog at a later step than its first message)."""
    return [queue, *(f"{queue}\x06\x16{step}" for step in (3, 6, 9))]


def _waiting(broker: redis.Redis, queue: str) -> int:
    """Messages waiting in a queue."""
    return sum(int(broker.llen(name)) for name in _lists(queue))


def _waiting_ids(broker: redis.Redis, queue: str) -> list[str]:
    """The task ids of the messages waiting in a queue."""
    raw = [m for name in _lists(queue) for m in broker.lrange(name, 0, -1)]  # type: ignore[union-attr]
    return [json.loads(message)["headers"]["id"] for message in raw]


def _checks_seen(fleet: Fleet, name: str) -> list[str]:
    return _CHECKED.findall(fleet.log_of(name))


def test_lost_messages_are_sent_again_within_seconds_at_default_settings(
    defaults: None, fleet: Fleet, private_redis: PrivateRedis, tmp_path: Path
) -> None:
    broker = redis.Redis.from_url(private_redis.url)
    coordination = fleet.start(COORDINATION, concurrency=2)
    owner, reviewer = new_tenant()
    reviewers = Reviewers(reviewer)
    figures: dict[str, list[float]] = {}
    with beat(fleet, tmp_path) as scheduler:
        run_ids = [start_assessment(owner, documents=1).id for _ in range(RUNS)]

        # 1. A backlog: every run's job queued, no worker for its queue yet. The message
        # check looks at them (past the grace period) and sends nothing again.
        ids = _queued_jobs(run_ids, "ingest_documents", broker)
        seen = len(_checks_seen(fleet, coordination))
        poll(
            lambda: _checks_seen(fleet, coordination)[seen:],
            lambda checks: sum(_looked_at_all(check) for check in checks) >= 2,
            timeout_s=60,
            what="two message checks that looked at the whole backlog",
        )
        # Each of this test's jobs waits once: never sent again. The private server is
        # shared with the module's other fault tests, whose leftover messages are not ours.
        ours = Counter(i for i in _waiting_ids(broker, "ingestion") if i in set(ids))
        assert ours == dict.fromkeys(ids, 1), "a backlog is never sent twice"
        assert set(_resends(ids).values()) == {0}

        # 2. FLUSHALL with the jobs queued.
        since = time.time()
        broker.flushall()
        fleet.start("ingestion", concurrency=2)  # the knowledge-base jobs queue next
        figures["FLUSHALL"] = _started(ids, since, "jobs started after FLUSHALL")
        assert set(_resends(ids).values()) == {1}, "each lost message sent again once"

        # 3. Redis restarted empty with the next jobs queued (no worker reads their queue).
        ids = _queued_jobs(run_ids, "index_kb", broker)
        private_redis.restart()
        since = time.time()
        poll(_app_reconnected, bool, timeout_s=30, what="this process's broker connection")
        fleet.start(HEAVY, concurrency=2)
        figures["Redis restarted empty"] = _started(ids, since, "jobs started after a restart")
        assert set(_resends(ids).values()) == {1}

        # 4. The coordinator dies between its commit and its send (the scope job it queued
        # has no message); a supervisor starts another.
        fleet.stop(coordination)
        mark = tmp_path / "died"
        dying = fleet.start(
            COORDINATION,
            concurrency=2,
            include=("orchestrator.testing.die_before_send",),
            extra_env={
                "LIFECYCLE_DIE_BEFORE_SENDING": "create_scope",
                "LIFECYCLE_DIE_BEFORE_SENDING_MARK": str(mark),
            },
        )
        process = fleet.workers.pop(dying)
        poll(
            lambda: reviewers.step(run_ids) or process.poll(),
            lambda exited: exited is not None and exited is not False,
            timeout_s=180,
            what="the coordinator to die between commit and send",
        )
        since = time.time()
        lost = mark.read_text().split(",")
        coordination = fleet.start(COORDINATION, concurrency=2)
        figures["coordinator killed between commit and send"] = _started(
            lost, since, "the unsent job to start", reviewers, run_ids
        )
        assert set(_resends(lost).values()) == {1}

        finals = reviewers.drive(run_ids, timeout_s=300)
        assert scheduler.poll() is None, "celery beat exited"

    assert {run.status for run in finals.values()} == {"completed"}, finals
    assert dead_letters(run_ids) == 0
    for run_id in run_ids:
        assert step_counts(run_id) == {(step.value, "completed"): 1 for step in STEP_ORDER}
    broker.close()
    print()
    for fault, seconds in figures.items():
        shown = ", ".join(f"{s:.1f}" for s in seconds)
        print(f"{fault}: job started {shown} s after the broker answered (target <= {TARGET_S:g})")
    worst = max(max(seconds) for seconds in figures.values())
    print(f"worst: {worst:.1f} s; messages re-sent per lost job: 1; per backlog job: 0")
