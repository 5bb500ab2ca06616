"""Handoffs, compensation, pinned definitions and beat's health on PostgreSQL and Redis,
with real worker processes (instant job bodies) and a real `celery beat`.

One fleet for the module: a worker on the orchestrator and notifications queues (the
coordinator, webhooks and effects outside the database) and one on the heavy queues.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from orchestrator.api import app
from orchestrator.config.settings import reset_settings
from orchestrator.contracts.errors import HandoffConflict
from orchestrator.contracts.identity import Actor
from orchestrator.db.models import AuditEvent, StepExecution
from orchestrator.db.session import transaction
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.notifications.export_targets import add_export_target
from orchestrator.notifications.subscriptions import subscribe
from orchestrator.service.approval_events import record_approval
from orchestrator.service.effect_views import list_effects
from orchestrator.service.handoffs import HandoffView, list_handoffs, resolve_handoff
from orchestrator.service.producer import get_run
from orchestrator.service.read_models import RunView
from orchestrator.testing.definition_v2 import V2
from orchestrator.testing.reset import reset_process_state
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.definitions import deployed
from tests.support.faults import beat
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import poll, scaled, wait_for
from tests.support.webhook_receiver import Receiver, webhook_receiver

INSTANT = ("orchestrator.testing.instant_worker",)
HEAVY = "ingestion,kb_index,analysis,reporting"
SHIP_V2 = ("orchestrator.testing.ship_definition_v2",)
QUICK = {
    # An export target silent for a second has not answered; sweeps every second.
    "LIFECYCLE_EFFECT_TIMEOUT_S": "1",
    "LIFECYCLE_SWEEP_INTERVAL_S": "1",
}


@pytest.fixture(scope="module")
def parity(
    postgres_url: str, broker_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Fleet]:
    home = tmp_path_factory.mktemp("parity")
    env = {
        "LIFECYCLE_DATABASE_URL": postgres_url,
        "LIFECYCLE_BROKER_URL": broker_url,
        "LIFECYCLE_HOME": str(home),
        "LIFECYCLE_STORAGE_DIR": str(home / "storage"),
        **QUICK,
    }
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        reset_process_state()
        with Fleet(env, home / "logs", ready_timeout_s=scaled(60)) as fleet:
            fleet.start("orchestrator,notifications", concurrency=4)
            fleet.start(HEAVY, concurrency=2, include=INSTANT)
            yield fleet
        reset_process_state()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with webhook_receiver() as running:
        yield running


def follow(reviewer: Actor, run_id: uuid.UUID, until: Callable[[RunView], bool]) -> RunView:
    """Answer the run's waits as a reviewer would until `until` holds (not answering it)."""
    answers = ScriptedReviewer(reviewer)

    def observe() -> RunView:
        run = get_run(reviewer, run_id)
        if not until(run):
            assert run.status not in ("completed", "cancelled", "failed"), run
            answers.answer(run)
        return run

    return poll(observe, until, timeout_s=120, what=f"run {run_id}", interval_s=0.05)


def at(step: str, status: str = "waiting_for_approval") -> Callable[[RunView], bool]:
    return lambda run: run.current_step == step and run.status == status


def audits(run_id: uuid.UUID, event_type: str) -> list[AuditEvent]:
    with transaction() as session:
        return list(
            session.scalars(
                select(AuditEvent).where(
                    AuditEvent.run_id == run_id, AuditEvent.event_type == event_type
                )
            )
        )


def race(*calls: Callable[[], HandoffView]) -> list[HandoffView | HandoffConflict]:
    """Each call on its own thread, released together."""
    start = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int) -> None:
        start.wait()
        try:
            results[index] = calls[index]()
        except HandoffConflict as conflict:
            results[index] = conflict

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(scaled(60))
    return results


@pytest.mark.broker_matrix
def test_a_timed_out_export_is_resolved_once_by_two_racing_operators_then_withdrawn_on_rejection(
    parity: Fleet, receiver: Receiver
) -> None:
    owner, reviewer = new_tenant()
    add_export_target(owner, receiver.url)
    subscribe(owner, receiver.url + "/events", event_types=["approval.requested"])
    receiver.stalled.set()
    run = start_assessment(owner, documents=1)

    follow(reviewer, run.id, at("wait_for_report_approval"))
    poll(  # the report's publication goes unanswered: the run waits at a handoff
        lambda: get_run(owner, run.id), at("wait_for_report_approval", "blocked"), timeout_s=60
    )
    [handoff] = poll(
        lambda: list_handoffs(owner, run_id=run.id), bool, timeout_s=30, what="the handoff"
    )
    assert handoff.reason == "outcome_unknown" and "sent, no answer" in handoff.detail
    [export] = [e for e in list_effects(owner, run.id) if e.kind == "export"]
    assert export.status == "outcome_unknown" and export.attempts == 1

    ana, rui = Actor(owner.tenant_id, "user:ana"), Actor(owner.tenant_id, "user:rui")
    results = race(  # both saw the publication in the store; one of them records it
        lambda: resolve_handoff(ana, handoff.id, "confirm_effect", evidence_ref="store #12"),
        lambda: resolve_handoff(rui, handoff.id, "confirm_effect", evidence_ref="store 12"),
    )

    won = [r for r in results if isinstance(r, HandoffView)]
    lost = [r for r in results if isinstance(r, HandoffConflict)]
    assert len(won) == 1 and len(lost) == 1, results
    assert f"resolved by {won[0].resolved_by} (confirm_effect)" in lost[0].message
    assert len(audits(run.id, "lifecycle_workflow_handoff_resolved")) == 1
    assert len(audits(run.id, "lifecycle_workflow_effect_performed")) == 1
    follow(reviewer, run.id, at("wait_for_report_approval"))
    assert {e.id: e.status for e in list_effects(owner, run.id)}[export.id] == "confirmed"
    published = [b for b in receiver.bodies() if b["type"] == "export.published"]
    assert len(published) == 1  # sent once, never again

    receiver.stalled.clear()
    record_approval(reviewer, run.id, "report", 1, decision="rejected", comment="wrong period")
    wait_for(
        lambda: {e.id: e.status for e in list_effects(owner, run.id)}[export.id] == "compensated",
        what="the publication retracted",
    )
    wait_for(
        lambda: any(b["type"] == "approval.withdrawn" for b in receiver.bodies()),
        what="the approval request withdrawn",
    )
    kinds = [body["type"] for body in receiver.bodies()]
    assert kinds.count("export.retracted") == 1 and kinds.count("approval.withdrawn") == 1
    retraction = next(b for b in receiver.bodies() if b["type"] == "export.retracted")
    assert retraction["data"]["retracts"] == str(export.id)
    # Each undo is audited when its target's answer is recorded, just after it arrives.
    wait_for(
        lambda: len(audits(run.id, "lifecycle_workflow_effect_compensated")) == 2,
        what="both undos audited",
    )
    assert get_run(owner, run.id).status == "waiting_for_input"


def _steps(run_id: uuid.UUID) -> set[str]:
    with transaction() as session:
        return set(
            session.scalars(select(StepExecution.step).where(StepExecution.run_id == run_id))
        )


@pytest.mark.broker_matrix
def test_a_run_started_on_v1_completes_on_v1_after_v2_is_deployed(parity: Fleet) -> None:
    owner, reviewer = new_tenant()
    old = start_assessment(owner, documents=1)
    follow(reviewer, old.id, at("wait_for_soa_approval"))

    # The deployment of v2: every worker restarts shipping v2 beside v1, and so does
    # this process (which starts runs, as the API would).
    for name in list(parity.workers):
        parity.stop(name)
    with deployed(V2):
        parity.start(
            "orchestrator,notifications", include=("orchestrator.testing.ship_definition_v2",)
        )
        parity.start(HEAVY, include=(*INSTANT, "orchestrator.testing.ship_definition_v2"))
        new = start_assessment(owner, documents=1)
        finished_old = follow(reviewer, old.id, lambda r: r.status == "completed")
        finished_new = follow(reviewer, new.id, lambda r: r.status == "completed")

    assert finished_old.context["definition"]["version"] == 1
    assert "ingest_soa" in _steps(old.id)
    assert finished_new.context["definition"] == {"version": 2, "hash": V2.content_hash}
    assert "ingest_soa" not in _steps(new.id) and "run_evidence_analysis" in _steps(new.id)


@pytest.mark.broker_matrix
@pytest.mark.allows_server_error(
    reason="the health report answers 503 until every sweep ran and once beat stops: "
    "what the test checks",
    paths=("/health",),
)
def test_beat_is_in_the_health_report_with_its_last_sweep(parity: Fleet, tmp_path: Path) -> None:
    client = TestClient(app)
    reset_settings()
    with beat(parity, tmp_path):
        healthy = poll(
            lambda: client.get("/health"),
            lambda r: r.status_code == 200,
            timeout_s=60,
            what="every scheduled sweep to have run",
        )
    report = healthy.json()["checks"]["beat"]
    assert report["ok"] and report["last_sweep_at"]
    assert {s["task"] for s in report["sweeps"] if s["runs"] >= 1} >= {
        "orchestrator.sweep_inbox",
        "effects.sweep",
    }
    stopped = poll(
        lambda: client.get("/health"),
        lambda r: r.status_code == 503,
        timeout_s=60,
        what="beat's silence to show",
    )
    beat_check = stopped.json()["checks"]["beat"]
    assert not beat_check["ok"] and "not started within 3 intervals" in beat_check["detail"]
