"""Fair sharing: a tenant at its limit of running jobs on a queue waits at the back of the
queue while other tenants' jobs start; the limit is set per tenant; a metric shows each
tenant's queued and running jobs; a tenant's first message on a queue is ordered ahead of
other tenants' backlogs."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client.core import Metric

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import InboxSignal, Job, WorkflowRun
from orchestrator.db.session import dispose_engines, transaction
from orchestrator.engine import messages, tenant_order
from orchestrator.engine.tenant_order import Level
from orchestrator.jobs import task as task_module
from orchestrator.jobs import tenant_share
from orchestrator.observability.broker_view import SENT_AT_HEADER
from orchestrator.observability.state_metrics import StateCollector
from tests.support.services import open_kit

A, B = "tenant-a", "tenant-b"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, uuid.UUID]]:
    """One run of tenant A (the kit's) and one of tenant B, in a fresh database."""
    with open_kit(tmp_path) as kit:
        url = str(kit.session.get_bind().engine.url)
        ids = {A: kit.run.id, B: uuid.uuid4()}
        template = kit.run
    monkeypatch.setenv("LIFECYCLE_DATABASE_URL", url)
    monkeypatch.setenv("LIFECYCLE_TENANT_JOB_LIMIT", "2")
    monkeypatch.setenv("LIFECYCLE_TENANT_DEFER_S", "0")
    reset_settings()
    dispose_engines()
    _add_run(ids[B], template.assessment_id, B, "running")
    yield ids
    dispose_engines()
    reset_settings()


def _add_run(run_id: uuid.UUID, assessment_id: uuid.UUID, tenant: str, status: str) -> None:
    with transaction() as session:
        session.add(
            WorkflowRun(
                id=run_id,
                assessment_id=assessment_id,
                tenant_id=tenant,
                organization_id=f"org-{tenant}",
                status=status,
                context={},
                version=1,
                trace_id=f"trace-{run_id}",
                started_by=f"user:{tenant}",
                start_idempotency_key=f"start-{run_id}",
                start_request_hash="0" * 64,
                created_at=utcnow(),
                updated_at=utcnow(),
            )
        )


def _job(run_id: uuid.UUID, n: int, status: str) -> str:
    job_id = f"{run_id}:run_scf_pre_analysis:{n}"
    now = utcnow()
    with transaction() as session:
        session.add(
            Job(
                id=job_id,
                run_id=run_id,
                step="run_scf_pre_analysis",
                step_attempt=n,
                kind=JobKind.ANALYSIS.value,
                queue="analysis",
                status=status,
                deliveries=1 if status == "started" else 0,
                request={},
                created_at=now,
                updated_at=now,
            )
        )
    return job_id


def _backlog(run_id: uuid.UUID) -> tuple[str, str]:
    """Two queued jobs of the run on the analysis queue: its tenant's first and backlog."""
    return _job(run_id, 1, "queued"), _job(run_id, 2, "queued")


def _request(run_id: uuid.UUID, tenant: str, job_id: str) -> JobRequest:
    return JobRequest(
        job_id=job_id,
        kind=JobKind.ANALYSIS,
        run_id=run_id,
        step=Step.RUN_SCF_PRE_ANALYSIS,
        attempt=1,
        idempotency_key=job_id,
        trace_id="t",
        tenant_id=tenant,
        organization_id="org",
        assessment_id=uuid.uuid4(),
        actor_id="tester",
    )


def _samples(metric_name: str) -> dict[tuple[str, ...], float]:
    metrics: list[Metric] = list(StateCollector().collect())
    family = next(m for m in metrics if m.name == metric_name)
    return {tuple(s.labels.values()): s.value for s in family.samples}


def test_a_tenant_at_its_limit_waits_while_another_tenant_starts(
    runs: dict[str, uuid.UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in (1, 2):
        _job(runs[A], n, "started")
    a_next = _request(runs[A], A, _job(runs[A], 3, "queued"))
    b_first = _request(runs[B], B, _job(runs[B], 1, "queued"))
    sent: list[tuple[Any, ...]] = []
    monkeypatch.setattr(tenant_share, "send_job", lambda *args: sent.append(args))

    assert not tenant_share.admitted(a_next)
    assert tenant_share.admitted(b_first)
    tenant_share.send_to_back(a_next, {"job_id": a_next.job_id})
    # The same job's message, at the end of its own queue; its row still queued.
    assert sent == [
        ("analysis.run_step", "analysis", a_next.job_id, {"job_id": a_next.job_id}, None)
    ]
    assert _samples("lifecycle_tenant_jobs") == {
        (A, "analysis", "started"): 2,
        (A, "analysis", "queued"): 1,
        (B, "analysis", "queued"): 1,
    }


def test_limits_are_set_per_tenant(
    runs: dict[str, uuid.UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in (1, 2):
        _job(runs[A], n, "started")
        _job(runs[B], n, "started")
    monkeypatch.setenv("LIFECYCLE_TENANT_JOB_LIMITS", '{"tenant-a": 3, "tenant-b": 0}')
    reset_settings()

    assert tenant_share.admitted(_request(runs[A], A, _job(runs[A], 3, "queued")))
    _job(runs[A], 4, "started")
    assert not tenant_share.admitted(_request(runs[A], A, _job(runs[A], 5, "queued")))
    # 0: no limit for tenant B.
    assert tenant_share.admitted(_request(runs[B], B, _job(runs[B], 3, "queued")))


def _pending_signal(run_id: uuid.UUID, key: str) -> None:
    with transaction() as session:
        session.add(
            InboxSignal(
                signal_id=uuid.uuid4(),
                run_id=run_id,
                type="workflow_start_requested",
                idempotency_key=key,
                content_hash="0" * 64,
                envelope={},
                fate="pending",
                received_at=utcnow(),
            )
        )


def _broker(monkeypatch: pytest.MonkeyPatch, url: str, fair: bool = True) -> None:
    monkeypatch.setenv("LIFECYCLE_BROKER_URL", url)
    monkeypatch.setenv("LIFECYCLE_TENANT_GIVE_WAY_AFTER_S", "0")
    monkeypatch.setenv("LIFECYCLE_TENANT_FAIR_ORDER", "true" if fair else "false")
    reset_settings()


def test_a_tenants_first_job_on_a_queue_goes_ahead_of_another_tenants_backlog(
    runs: dict[str, uuid.UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    _broker(monkeypatch, "redis://127.0.0.1:6379/15")
    a_first, a_second = _backlog(runs[A])
    b_first = _job(runs[B], 1, "queued")
    _job(runs[B], 2, "started")  # running, not waiting: B still has nothing queued
    with transaction() as session:
        assert tenant_order.job_level(session, A, "analysis", a_second) is Level.BACKLOG
        assert tenant_order.job_level(session, B, "analysis", b_first) is Level.FIRST
        # Another queue is another order: A has nothing queued on ingestion.
        assert tenant_order.job_level(session, A, "ingestion", a_first) is Level.FIRST
        # Redis reads priority step 0 (no priority) first; the backlog goes to step 9.
        assert tenant_order.job_priority(session, B, "analysis", b_first) is None
        assert tenant_order.job_priority(session, A, "analysis", a_second) == 9


def test_a_wake_up_is_first_unless_another_run_of_its_tenant_has_a_pending_signal(
    runs: dict[str, uuid.UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    _broker(monkeypatch, "redis://127.0.0.1:6379/15")
    _pending_signal(runs[A], "start-a")
    # A's own pending signal is what its wake-up is for: still first.
    assert not _behind(runs[A])
    _pending_signal(runs[B], "start-b")
    assert not _behind(runs[B])  # A's pending signal is not B's
    other_a = uuid.uuid4()
    with transaction() as session:
        template = session.get(WorkflowRun, runs[A])
        assert template is not None
        assessment_id = template.assessment_id
    _add_run(other_a, assessment_id, A, "pending")
    assert _behind(other_a)  # behind A's first run's start
    with transaction() as session:
        assert tenant_order.wake_level(session, other_a) is Level.BACKLOG
    sent: list[dict[str, Any]] = []

    class _App:
        def send_task(self, *_: Any, **options: Any) -> None:
            sent.append(options)

    monkeypatch.setattr(messages, "get_app", lambda: _App())
    messages.kick(other_a, behind=True)
    messages.kick(runs[B])
    assert [s["priority"] for s in sent] == [9, None]  # Redis: step 9, then step 0


def _behind(run_id: uuid.UUID) -> bool:
    with transaction() as session:
        return tenant_order.wake_behind(session, run_id)


def test_the_levels_per_broker_and_the_switch(
    runs: dict[str, uuid.UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    _broker(monkeypatch, "amqp://guest:guest@127.0.0.1:5672//")
    # RabbitMQ 4 quorum queues: a priority above 4 is high, the rest normal.
    assert tenant_order.priority(Level.FIRST) == 5
    assert tenant_order.priority(Level.BACKLOG) is None
    _broker(monkeypatch, "redis://127.0.0.1:6379/15", fair=False)
    assert tenant_order.priority(Level.BACKLOG) is None
    _broker(monkeypatch, "memory://")
    assert tenant_order.priority(Level.BACKLOG) is None  # one process, no order to keep


def _sent_now() -> float:
    """A publish stamp taken now (celery_hooks stamps each message with time.time())."""
    return utcnow().timestamp()


def test_on_rabbitmq_a_backlog_message_gives_way_once_to_a_first_job_queued_behind_it(
    runs: dict[str, uuid.UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    """RabbitMQ 3.x quorum queues ignore priorities: the order is kept at delivery."""
    _broker(monkeypatch, "amqp://guest:guest@127.0.0.1:5672//")
    a_first, a_second = _backlog(runs[A])
    a_sent = _sent_now()  # A's messages are ahead of what is queued from here on
    assert not tenant_share.gives_way(A, "analysis", a_second, a_sent)  # nobody behind
    b_first = _job(runs[B], 1, "queued")

    assert tenant_share.gives_way(A, "analysis", a_second, a_sent)
    assert tenant_share.gives_way(A, "analysis", None, a_sent)  # a batch: always backlog
    # Sent again after B's job was queued, it is behind it: it does not give way again.
    assert not tenant_share.gives_way(A, "analysis", a_second, _sent_now())
    # Another queue, another order; and B never gives way to itself.
    assert not tenant_share.gives_way(A, "ingestion", None, a_sent)
    assert not tenant_share.gives_way(B, "analysis", None, a_sent)
    # No stamp (a message from before the stamps): it keeps its place.
    assert not tenant_share.gives_way(A, "analysis", a_second, None)

    # B with a second job queued has a backlog too: its jobs are no one's first.
    _job(runs[B], 2, "queued")
    assert not tenant_share.gives_way(A, "analysis", a_second, a_sent)
    with transaction() as session:
        session.get_one(Job, b_first).status = "started"
    assert tenant_share.gives_way(A, "analysis", a_second, a_sent)  # B's second is first

    # A's last queued job is its tenant's first: first jobs keep their order.
    with transaction() as session:
        session.get_one(Job, a_first).status = "started"
    assert not tenant_share.gives_way(A, "analysis", a_second, a_sent)


def test_a_message_that_waited_less_than_the_setting_keeps_its_place_unread(
    runs: dict[str, uuid.UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    _broker(monkeypatch, "amqp://guest:guest@127.0.0.1:5672//")
    monkeypatch.setenv("LIFECYCLE_TENANT_GIVE_WAY_AFTER_S", "60")
    reset_settings()
    _, a_second = _backlog(runs[A])
    _job(runs[B], 1, "queued")
    # Sent ten minutes and one second before B's job was queued: both are ahead of it.
    long_ago, just_now = _sent_now() - 600, _sent_now() - 1
    assert tenant_share.gives_way(A, "analysis", a_second, long_ago)
    assert not tenant_share.gives_way(A, "analysis", a_second, just_now)


def test_elsewhere_the_order_is_kept_by_priorities_not_at_delivery(
    runs: dict[str, uuid.UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a_second = _backlog(runs[A])
    a_sent = _sent_now()
    _job(runs[B], 1, "queued")
    _broker(monkeypatch, "redis://127.0.0.1:6379/15")
    assert not tenant_share.gives_way(A, "analysis", a_second, a_sent)
    _broker(monkeypatch, "amqp://guest:guest@127.0.0.1:5672//", fair=False)
    assert not tenant_share.gives_way(A, "analysis", a_second, a_sent)


class _Task:
    """What a batch task reads of its delivery: its name, retries and publish stamp."""

    name = "analysis.judge_batch"

    def __init__(self, sent_at: float, retries: int = 0) -> None:
        self.request = SimpleNamespace(retries=retries, **{SENT_AT_HEADER: sent_at})


def test_a_batch_that_gives_way_goes_back_to_its_queue_untaken(
    runs: dict[str, uuid.UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    _broker(monkeypatch, "amqp://guest:guest@127.0.0.1:5672//")
    a_sent = _sent_now()
    _job(runs[B], 1, "queued")
    sent: list[tuple[Any, ...]] = []
    monkeypatch.setattr(task_module, "send_batch", lambda *args: sent.append(args))
    taken: list[dict[str, Any]] = []

    def take(body: dict[str, Any]) -> str:
        taken.append(body)
        return "succeeded"

    body = {"batch_id": "j:batch:1", "job_id": "j", "tenant_id": A, "queue": "analysis"}
    assert task_module.run_batch_task(_Task(a_sent), body, take) == "gave way"
    assert sent == [("analysis.judge_batch", "analysis", "j:batch:1", body)] and not taken
    # A retry keeps its place; so does a batch offered before batches named their tenant.
    assert task_module.run_batch_task(_Task(a_sent, retries=1), body, take) == "succeeded"
    old = {"batch_id": "j:batch:2", "job_id": "j"}
    assert task_module.run_batch_task(_Task(a_sent), old, take) == "succeeded"
    assert taken == [body, old] and len(sent) == 1
