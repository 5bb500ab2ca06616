"""A whole lifecycle on PostgreSQL + Redis (and, in CI, again on RabbitMQ) with real worker
processes."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select

from orchestrator.contracts.steps import STEP_ORDER, StepKind
from orchestrator.db.models import Artifact, InboxSignal
from orchestrator.db.session import transaction
from orchestrator.demo.reviewer import ScriptedReviewer, drive
from orchestrator.lifecycle.definition import APPROVAL_WAIT_FOR, STEP_SPECS
from orchestrator.service.producer import get_run, send_signal
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.fleet_runs import (
    audit_counts,
    jobs_of,
    new_tenant,
    start_assessment,
    step_counts,
)
from tests.support.polling import scaled, wait_for
from tests.support.services import SMALL_FRAMEWORK

pytestmark = pytest.mark.integration
HEAVY = "ingestion,kb_index,analysis,reporting"

JOB_STEPS = sum(spec.kind is StepKind.JOB for spec in STEP_SPECS.values())


@pytest.mark.broker_matrix
def test_full_lifecycle_completes_every_step_exactly_once(fleet: Fleet) -> None:
    fleet.start("orchestrator", concurrency=2)
    fleet.start(HEAVY, concurrency=2)
    owner, reviewer = new_tenant()
    run = start_assessment(owner, documents=3)

    final = drive(ScriptedReviewer(reviewer), run.id, timeout_s=scaled(120))

    assert final.status == "completed", final
    steps = step_counts(run.id)
    assert steps == {(step.value, "completed"): 1 for step in STEP_ORDER}
    audits = audit_counts(run.id)
    for step in STEP_ORDER:
        assert audits[("lifecycle_workflow_step_started", step.value)] == 1, step
        assert audits[("lifecycle_workflow_step_completed", step.value)] == 1, step
    for wait in APPROVAL_WAIT_FOR.values():
        assert audits[("lifecycle_workflow_waiting_for_approval", wait.value)] == 1, wait
    assert audits[("lifecycle_workflow_started", None)] == 1
    assert audits[("lifecycle_workflow_completed", None)] == 1
    jobs = jobs_of(run.id)
    assert len(jobs) == JOB_STEPS and {job.status for job in jobs} == {"succeeded"}
    with transaction() as session:
        report = session.scalar(
            select(Artifact).where(Artifact.run_id == run.id, Artifact.kind == "report")
        )
        assert report is not None and report.status == "approved"
        assert report.storage_path and Path(report.storage_path).stat().st_size > 1000


@pytest.mark.broker_matrix
def test_same_signal_twice_changes_nothing_the_second_time(fleet: Fleet) -> None:
    fleet.start("orchestrator", concurrency=2)
    fleet.start(HEAVY, concurrency=2)
    owner, reviewer = new_tenant()
    run = start_assessment(owner, documents=1)
    wait_for(
        lambda: get_run(owner, run.id).current_step == "wait_for_framework_selection",
        what="the framework wait",
    )

    first = send_signal(
        reviewer,
        run.id,
        "framework_selected",
        "pick-framework",
        payload={"framework": SMALL_FRAMEWORK},
    )
    wait_for(
        lambda: get_run(owner, run.id).current_step != "wait_for_framework_selection",
        what="the framework wait to end",
    )
    audits_before, steps_before = audit_counts(run.id), step_counts(run.id)
    second = send_signal(
        reviewer,
        run.id,
        "framework_selected",
        "pick-framework",
        payload={"framework": SMALL_FRAMEWORK},
    )

    assert second.duplicate and second.signal_id == first.signal_id
    assert second.fate.value == "applied"
    with transaction() as session:
        copies = session.scalar(
            select(func.count())
            .select_from(InboxSignal)
            .where(InboxSignal.run_id == run.id, InboxSignal.idempotency_key == "pick-framework")
        )
    assert copies == 1
    final = drive(ScriptedReviewer(reviewer), run.id, timeout_s=scaled(120))
    assert final.status == "completed"
    after = audit_counts(run.id)
    # Nothing about the framework step was recorded twice.
    for key in audits_before:
        if key[1] == "wait_for_framework_selection":
            assert after[key] == audits_before[key], key
    assert step_counts(run.id)[("wait_for_framework_selection", "completed")] == 1
    assert steps_before[("wait_for_framework_selection", "completed")] == 1


@pytest.mark.broker_matrix
def test_worker_killed_mid_job_then_new_worker_completes_once(fleet: Fleet) -> None:
    fleet.start("orchestrator", concurrency=2)
    fleet.start("kb_index,analysis,reporting", concurrency=2)
    doomed = fleet.start(
        "ingestion",
        pool="solo",
        concurrency=1,
        extra_env={"LIFECYCLE_HOLD_JOB_STEP": "ingest_documents"},
        include=("orchestrator.testing.held_jobs",),
    )
    owner, reviewer = new_tenant()
    run = start_assessment(owner, documents=3)
    ingest_job = f"{run.id}:ingest_documents:1"
    wait_for(
        lambda: any(j.id == ingest_job and j.status == "started" for j in jobs_of(run.id)),
        what="the ingestion job to start",
    )

    fleet.kill(doomed)
    fleet.start("ingestion", pool="solo", concurrency=1)
    final = drive(ScriptedReviewer(reviewer), run.id, timeout_s=scaled(120))

    assert final.status == "completed", final
    job = next(j for j in jobs_of(run.id) if j.id == ingest_job)
    assert job.status == "succeeded" and job.deliveries == 2
    assert job.summary and job.summary["chunks"] > 0
    assert step_counts(run.id)[("ingest_documents", "completed")] == 1
    with transaction() as session:
        outcomes = session.scalar(
            select(func.count())
            .select_from(InboxSignal)
            .where(
                InboxSignal.run_id == run.id, InboxSignal.idempotency_key == f"outcome:{ingest_job}"
            )
        )
    assert outcomes == 1
