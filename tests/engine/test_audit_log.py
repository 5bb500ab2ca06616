"""The audit log: every spec event, complete context on each row, and append-only storage."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

from orchestrator.db.models import AuditEvent
from orchestrator.db.session import transaction
from orchestrator.demo.reviewer import ScriptedReviewer, drive
from orchestrator.service.operations import block_run, cancel_run, resume_run
from orchestrator.service.producer import get_run
from orchestrator.testing.worker_processes import WorkerProcesses
from tests.support.fleet_runs import SAMPLES, new_tenant, start_assessment
from tests.support.polling import scaled, wait_for

SPEC_EVENTS = {
    "lifecycle_workflow_started",
    "lifecycle_workflow_step_started",
    "lifecycle_workflow_step_completed",
    "lifecycle_workflow_waiting_for_approval",
    "lifecycle_workflow_signal_received",
    "lifecycle_workflow_blocked",
    "lifecycle_workflow_cancelled",
    "lifecycle_workflow_resumed",
    "lifecycle_workflow_completed",
}


@pytest.mark.broker_matrix
def test_every_spec_event_with_full_context_and_no_content(fleet: WorkerProcesses) -> None:
    fleet.start("orchestrator", concurrency=2)
    fleet.start("ingestion,kb_index,analysis,reporting", concurrency=2)
    owner, reviewer = new_tenant()
    completed = start_assessment(owner, documents=2)
    wait_for(
        lambda: get_run(owner, completed.id).status == "waiting_for_input", what="the first wait"
    )
    block_run(
        owner, completed.id, reason="waiting for the CISO", idempotency_key="b", kind="approval"
    )
    wait_for(lambda: get_run(owner, completed.id).status == "blocked", what="blocked")
    resume_run(owner, completed.id, reason="CISO is back", idempotency_key="r")
    wait_for(
        lambda: get_run(owner, completed.id).status == "waiting_for_input",
        what="resumed to where it stood",
    )
    final = drive(ScriptedReviewer(reviewer), completed.id, timeout_s=scaled(120))
    assert final.status == "completed"
    other_owner, _ = new_tenant()
    cancelled = start_assessment(other_owner, documents=1)
    cancel_run(other_owner, cancelled.id, reason="started by mistake", idempotency_key="c")
    wait_for(lambda: get_run(other_owner, cancelled.id).status == "cancelled", what="cancel")

    with transaction() as session:
        rows = list(
            session.scalars(
                select(AuditEvent).where(AuditEvent.run_id.in_([completed.id, cancelled.id]))
            )
        )
    assert {row.event_type for row in rows} >= SPEC_EVENTS
    for row in rows:
        assert row.tenant_id and row.organization_id and row.assessment_id and row.run_id
        assert row.actor_id and row.trace_id and row.created_at
        if "step_" in row.event_type or "waiting_for" in row.event_type:
            assert row.step, row.event_type
    blocked = next(r for r in rows if r.event_type == "lifecycle_workflow_blocked")
    assert blocked.event_metadata["reason"] == "waiting for the CISO"
    document_text = {
        line.strip()
        for path in sorted(SAMPLES.iterdir())[:2]
        for line in path.read_text().splitlines()
        if len(line.strip()) > 30
    }
    dumped = json.dumps([row.event_metadata for row in rows])
    assert not any(line in dumped for line in document_text), "document content leaked"


def test_audit_rows_refuse_update_and_delete_on_postgresql(fleet: WorkerProcesses) -> None:
    owner, _ = new_tenant()
    run = start_assessment(owner, documents=1)
    fleet.start("orchestrator", concurrency=1)
    wait_for(lambda: get_run(owner, run.id).status != "pending", what="the start")
    for statement in (
        "UPDATE audit_events SET actor_id = 'someone-else' WHERE run_id = :run",
        "DELETE FROM audit_events WHERE run_id = :run",
        "TRUNCATE audit_events",
    ):
        with pytest.raises(DBAPIError, match="append-only"), transaction() as session:
            session.execute(text(statement), {"run": run.id})
    with transaction() as session:
        actors = set(
            session.scalars(select(AuditEvent.actor_id).where(AuditEvent.run_id == run.id))
        )
    assert actors and "someone-else" not in actors
