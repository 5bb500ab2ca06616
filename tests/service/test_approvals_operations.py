"""Approvals, rejections, signoff policies and operator commands, end to end on the
embedded fleet (SQLite, in-process worker) through the producer and the coordinator."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from orchestrator.contracts.errors import InvalidInput, SignalRejected
from orchestrator.contracts.identity import Actor
from orchestrator.db.models import Artifact, InboxSignal, StepExecution, WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.engine.messages import get_app
from orchestrator.engine.replay import replay_run
from orchestrator.engine.run_rows import state_of
from orchestrator.lifecycle.rewind import RewindPlan
from orchestrator.runtime.embedded import embedded_worker
from orchestrator.service.approval_events import record_approval
from orchestrator.service.documents import upload_document
from orchestrator.service.operations import reprocess_step, request_new_version, retry_step
from orchestrator.service.producer import create_assessment, get_run, send_signal, start_lifecycle
from orchestrator.service.read_models import RunView
from tests.support.polling import poll
from tests.support.roles import grant

TENANT = "tenant-ops"
OWNER = Actor(TENANT, "user:owner")
REVIEWER = Actor(TENANT, "user:reviewer")
SAMPLE = b"# Access\n\nAccess reviews happen every quarter. MFA is required for admins."


@pytest.fixture
def fleet(embedded: Path) -> Iterator[None]:
    for principal in (
        OWNER,
        REVIEWER,
        *(Actor(TENANT, f"user:{p}") for p in ("other", "a", "b", "c")),
    ):
        grant(principal)
    grant(Actor(TENANT, "user:intern"), "intern")
    with embedded_worker(get_app(), concurrency=3):
        yield


def follow(
    run_id: uuid.UUID,
    until: Callable[[RunView], bool],
    reviewer: ScriptedReviewer | None = None,
    timeout_s: float = 60,
) -> RunView:
    """Watch the run (answering waits when a reviewer is given) until `until` holds."""

    def observe() -> RunView:
        run = get_run(OWNER, run_id)
        if not until(run):
            assert run.status not in ("completed", "cancelled", "failed"), run
            if reviewer is not None:
                reviewer.answer(run)
        return run

    return poll(observe, until, timeout_s=timeout_s, what=f"run {run_id}", interval_s=0.01)


def waiting_at(step: str, status: str = "waiting_for_approval") -> Callable[[RunView], bool]:
    return lambda run: run.current_step == step and run.status == status


#: These tests are about who approves which version: no gate asks for rows decided first
#: (tests/api/test_gate_readiness_http.py covers that), so versions move only as they say.
NO_DECISIONS_ASKED = {kind: {"require_decided": False} for kind in ("soa", "poam")}


def run_until(step: str, policies: dict[str, Any] | None = None) -> uuid.UUID:
    assessment = create_assessment(OWNER, "org", "Approvals")
    upload_document(OWNER, assessment.id, "access.md", SAMPLE)
    chosen = {
        kind: NO_DECISIONS_ASKED.get(kind, {}) | (policies or {}).get(kind, {})
        for kind in {*NO_DECISIONS_ASKED, *(policies or {})}
    }
    run = start_lifecycle(OWNER, assessment.id, f"s-{assessment.id}", policies=chosen)
    follow(
        run.id,
        lambda r: r.current_step == step and r.status.startswith("waiting"),
        ScriptedReviewer(REVIEWER),
    )
    return run.id


def finish(run_id: uuid.UUID) -> RunView:
    return follow(run_id, lambda r: r.status == "completed", ScriptedReviewer(REVIEWER))


def assert_replays(run_id: uuid.UUID) -> None:
    with transaction() as session:
        run = session.get(WorkflowRun, run_id)
        assert run is not None
        assert replay_run(session, run_id) == state_of(run)


def fates(run_id: uuid.UUID) -> dict[str, str]:
    with transaction() as session:
        return dict(
            session.execute(
                select(InboxSignal.idempotency_key, InboxSignal.fate).where(
                    InboxSignal.run_id == run_id
                )
            ).all()
        )


def test_changes_requested_waits_for_an_explicit_new_version(fleet: None) -> None:
    run_id = run_until("wait_for_soa_approval")
    record_approval(
        REVIEWER,
        run_id,
        "soa",
        1,
        decision="changes_requested",
        comment="exclude the physical security domain",
    )
    follow(run_id, waiting_at("wait_for_soa_approval", "waiting_for_input"))
    late = record_approval(Actor(TENANT, "user:other"), run_id, "soa", 1)
    with pytest.raises(SignalRejected, match="sent back"):
        send_signal(REVIEWER, run_id, "soa_approved", "approve-v1", approval_event_id=late.id)

    request_new_version(
        OWNER, run_id, "soa", reason="apply review comments", idempotency_key="soa-v2"
    )
    run = follow(
        run_id, lambda r: r.context["artifacts"]["soa"] == 2 and r.status == "waiting_for_approval"
    )
    assert run.current_step == "wait_for_soa_approval"
    assert finish(run_id).status == "completed"
    with transaction() as session:
        versions = dict(
            session.execute(
                select(Artifact.version, Artifact.status).where(
                    Artifact.run_id == run_id, Artifact.kind == "soa"
                )
            ).all()
        )
    assert versions == {1: "superseded", 2: "approved"}
    assert_replays(run_id)


def test_separation_of_duties_and_roles_are_enforced_at_once(fleet: None) -> None:
    run_id = run_until("wait_for_soa_approval")
    request_new_version(REVIEWER, run_id, "soa", reason="redo", idempotency_key="redo")
    follow(
        run_id, lambda r: r.context["artifacts"]["soa"] == 2 and r.status == "waiting_for_approval"
    )
    own = record_approval(REVIEWER, run_id, "soa", 2)
    with pytest.raises(SignalRejected, match="asked for this draft"):
        send_signal(REVIEWER, run_id, "soa_approved", "self", approval_event_id=own.id)
    intern = Actor(TENANT, "user:intern")
    weak = record_approval(intern, run_id, "soa", 2, approver_role="intern")
    with pytest.raises(SignalRejected, match="may not approve"):
        send_signal(intern, run_id, "soa_approved", "intern", approval_event_id=weak.id)
    good = record_approval(OWNER, run_id, "soa", 2)
    send_signal(OWNER, run_id, "soa_approved", "owner", approval_event_id=good.id)
    follow(run_id, lambda r: r.context["approved"].get("soa") == 2)
    recorded = fates(run_id)
    assert (recorded["self"], recorded["intern"]) == ("rejected", "rejected")
    assert_replays(run_id)


def test_two_of_three_policy_opens_only_with_two_designated_approvers(fleet: None) -> None:
    approvers = ["user:a", "user:b", "user:c"]
    run_id = run_until(
        "wait_for_soa_approval",
        policies={"soa": {"mode": "n_of_m", "approvers": approvers, "required": 2}},
    )
    a, b = Actor(TENANT, "user:a"), Actor(TENANT, "user:b")
    first = record_approval(a, run_id, "soa", 1)
    send_signal(a, run_id, "soa_approved", "a", approval_event_id=first.id)
    outsider = record_approval(REVIEWER, run_id, "soa", 1)
    with pytest.raises(SignalRejected, match="not a designated approver"):
        send_signal(REVIEWER, run_id, "soa_approved", "x", approval_event_id=outsider.id)
    again = record_approval(a, run_id, "soa", 1)
    send_signal(a, run_id, "soa_approved", "a-again", approval_event_id=again.id)
    follow(run_id, lambda r: fates(run_id)["a-again"] != "pending")
    # Read after the fate: the view `follow` read first may predate the transaction that
    # decided it (coordination no longer waits behind jobs, so it can land in between).
    run = get_run(OWNER, run_id)
    assert fates(run_id)["a-again"] == "ignored"
    assert run.context["collected"]["soa"] == ["user:a"]
    assert (run.status, run.current_step) == ("waiting_for_approval", "wait_for_soa_approval")
    second = record_approval(b, run_id, "soa", 1)
    send_signal(b, run_id, "soa_approved", "b", approval_event_id=second.id)
    follow(run_id, lambda r: r.context["approved"].get("soa") == 1)
    follow(run_id, waiting_at("wait_for_gap_approval"), ScriptedReviewer(REVIEWER))
    assert_replays(run_id)


def test_reprocess_dry_run_then_for_real_supersedes_downstream(fleet: None) -> None:
    run_id = run_until("wait_for_gap_approval")
    with pytest.raises(InvalidInput, match="new-version flag"):
        reprocess_step(
            OWNER,
            run_id,
            "create_soa_draft",
            reason="x",
            idempotency_key="k",
            new_version=False,
            dry_run=True,
        )
    plan = reprocess_step(
        OWNER,
        run_id,
        "create_soa_draft",
        reason="new control set",
        idempotency_key="k",
        new_version=True,
        dry_run=True,
    )
    assert isinstance(plan, RewindPlan)
    assert [k.value for k in plan.approvals_to_collect_again] == ["soa"]
    assert [s.value for s in plan.superseded_steps] == [
        "create_soa_draft",
        "wait_for_soa_approval",
        "ingest_soa",
        "run_evidence_analysis",
        "create_gap_analysis",
        "wait_for_gap_approval",
    ]
    assert get_run(OWNER, run_id).current_step == "wait_for_gap_approval"  # nothing changed

    reprocess_step(
        OWNER,
        run_id,
        "create_soa_draft",
        reason="new control set",
        idempotency_key="k",
        new_version=True,
    )
    final = finish(run_id)
    assert final.context["artifacts"]["soa"] == 2
    assert final.context["artifacts"]["gap_analysis"] == 2
    with transaction() as session:
        rows = session.execute(
            select(StepExecution.step, StepExecution.attempt, StepExecution.status).where(
                StepExecution.run_id == run_id
            )
        ).all()
    assert sorted((a, s) for step, a, s in rows if step == "create_soa_draft") == [
        (1, "superseded"),
        (2, "completed"),
    ]
    assert sorted((a, s) for step, a, s in rows if step == "wait_for_gap_approval") == [
        (1, "superseded"),
        (2, "completed"),
    ]
    assert_replays(run_id)


def test_retry_needs_a_reason_and_a_failed_run(fleet: None) -> None:
    run_id = run_until("wait_for_framework_selection")
    with pytest.raises(InvalidInput, match="reason"):
        retry_step(OWNER, run_id, reason=" ", idempotency_key="r")
    receipt = retry_step(OWNER, run_id, reason="try again", idempotency_key="r")
    follow(run_id, lambda r: fates(run_id)["r"] != "pending")
    assert fates(run_id)["r"] == "ignored" and receipt.run.id == run_id
