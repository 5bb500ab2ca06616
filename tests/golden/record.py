"""Record the golden histories again from real runs: `python -m tests.golden.record`.

Each scenario is a real run on a fresh embedded database (SQLite), driven through the
same functions the API and the workers call: the producer, approval events, operator
commands, the job runtime (instant job bodies, and a failing one), the effect worker
against a real HTTP receiver, handoff resolution. Its history is exported with
`orchestrator.engine.history.export_history`, which checks it against the database, and
written to tests/golden/histories/<scenario>.json.

Recording makes new runs (new ids), so every file changes: use it when a scenario is
added or changed. When a rule changed on purpose, regenerate the expectations of the
recorded runs instead (`lifecycle history regenerate tests/golden/histories/*.json`).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import uuid
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from sqlalchemy import select

from orchestrator.contracts.errors import SignalRejected
from orchestrator.contracts.identity import Actor
from orchestrator.db.effect_models import ExternalEffect
from orchestrator.db.migrate import upgrade
from orchestrator.db.session import transaction
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.engine.coordinator import coordinate
from orchestrator.engine.history import export_history
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult
from orchestrator.notifications.effect_worker import perform_effect
from orchestrator.notifications.export_targets import add_export_target
from orchestrator.service.approval_events import record_approval
from orchestrator.service.handoffs import list_handoffs, resolve_handoff
from orchestrator.service.operations import (
    block_run,
    cancel_run,
    reprocess_step,
    request_new_version,
    resume_run,
    retry_step,
)
from orchestrator.service.producer import get_run, send_signal
from orchestrator.testing.reset import reset_process_state
from tests.support.sweeps import drive_to, new_tenant, no_kick, run_queued_jobs, start_run
from tests.support.webhook_receiver import webhook_receiver

HISTORIES = Path(__file__).parent / "histories"


def failing_service(context: JobContext) -> JobResult:
    raise JobFailure("source_unreadable", "the evidence store refused the read")


def finish(reviewer: Actor, run_id: uuid.UUID) -> None:
    answers = ScriptedReviewer(reviewer)
    for _ in range(80):
        coordinate(run_id)
        run = get_run(reviewer, run_id)
        if run.status in ("completed", "cancelled"):
            return
        if not run_queued_jobs(run_id) and not answers.answer(run):
            raise AssertionError(f"run stuck at {run.status} {run.current_step}")
    raise AssertionError("run did not finish")


def every_step() -> uuid.UUID:
    """Every step once, each gate approved by a reviewer."""
    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    finish(reviewer, run_id)
    return run_id


def rejections() -> uuid.UUID:
    """A SoA sent back for changes and drafted again; an empty framework choice refused;
    the report rejected and drafted again."""
    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    drive_to(reviewer, run_id, "wait_for_soa_approval")
    record_approval(reviewer, run_id, "soa", 1, decision="changes_requested", comment="scope")
    coordinate(run_id)
    request_new_version(
        owner, run_id, "soa", reason="review notes", idempotency_key="soa-2", kick=no_kick
    )
    coordinate(run_id)
    run_queued_jobs(run_id)
    coordinate(run_id)
    with suppress(SignalRejected):  # recorded as rejected, with the reason
        send_signal(owner, run_id, "framework_selected", "no-framework", payload={})
    drive_to(reviewer, run_id, "wait_for_report_approval")
    record_approval(reviewer, run_id, "report", 1, decision="rejected", comment="wrong period")
    coordinate(run_id)
    request_new_version(
        owner, run_id, "report", reason="fix period", idempotency_key="rep-2", kick=no_kick
    )
    finish(reviewer, run_id)
    return run_id


def operator_commands() -> uuid.UUID:
    """Blocked and resumed at a wait, the gap analysis reprocessed as a new version, then
    the run cancelled (and a signal after that ignored)."""
    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    drive_to(reviewer, run_id, "wait_for_gap_approval")
    block_run(owner, run_id, reason="auditor on leave", idempotency_key="block", kick=no_kick)
    coordinate(run_id)
    resume_run(owner, run_id, reason="auditor back", idempotency_key="resume", kick=no_kick)
    coordinate(run_id)
    reprocess_step(
        owner,
        run_id,
        "create_gap_analysis",
        reason="new evidence",
        idempotency_key="reprocess",
        new_version=True,
        kick=no_kick,
    )
    drive_to(reviewer, run_id, "wait_for_maturity_approval")
    cancel_run(owner, run_id, reason="client withdrew", idempotency_key="cancel", kick=no_kick)
    coordinate(run_id)
    send_signal(owner, run_id, "framework_selected", "too-late", payload={"framework": "SCF"})
    coordinate(run_id)
    return run_id


def fault_recovery() -> uuid.UUID:
    """Documents uploaded while ingestion ran are read by another attempt; a job fails
    for good, an operator blocks the failed run (ignored) and retries the step."""
    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    coordinate(run_id)
    send_signal(
        owner,
        run_id,
        "documents_uploaded",
        "more-docs",
        payload={"document_count": 2},
        kick=no_kick,
    )
    coordinate(run_id)
    drive_to(reviewer, run_id, "wait_for_gap_approval")
    ScriptedReviewer(reviewer).answer(get_run(reviewer, run_id))
    coordinate(run_id)
    run_queued_jobs(run_id, failing_service)
    coordinate(run_id)
    block_run(owner, run_id, reason="look at it", idempotency_key="block-failed", kick=no_kick)
    coordinate(run_id)
    retry_step(owner, run_id, reason="store is back", idempotency_key="retry", kick=no_kick)
    coordinate(run_id)
    finish(reviewer, run_id)
    return run_id


def handoff_and_compensation() -> uuid.UUID:
    """The report published to an export target that never answers: a handoff blocks
    the run; an operator confirms the effect with evidence; the report is rejected, so
    its publication is retracted; the next version is published and approved."""
    owner, reviewer = new_tenant()
    with webhook_receiver() as target:
        add_export_target(owner, target.url)
        run_id = start_run(owner)
        drive_to(reviewer, run_id, "wait_for_report_approval")
        target.stalled.set()
        for effect in _effects(run_id):
            perform_effect(effect)
        coordinate(run_id)
        [handoff] = list_handoffs(owner, run_id=run_id)
        resolve_handoff(
            owner, handoff.id, "confirm_effect", evidence_ref="store record 81", kick=no_kick
        )
        coordinate(run_id)
        target.stalled.clear()
        record_approval(reviewer, run_id, "report", 1, decision="rejected", comment="typo")
        coordinate(run_id)
        for effect in _effects(run_id):
            perform_effect(effect)
        request_new_version(
            owner, run_id, "report", reason="typo", idempotency_key="rep-2", kick=no_kick
        )
        drive_to(reviewer, run_id, "wait_for_report_approval")
        for effect in _effects(run_id):
            perform_effect(effect)
        finish(reviewer, run_id)
    return run_id


def _effects(run_id: uuid.UUID) -> list[uuid.UUID]:
    with transaction() as session:
        return list(
            session.scalars(
                select(ExternalEffect.id).where(
                    ExternalEffect.run_id == run_id, ExternalEffect.status == "pending"
                )
            )
        )


SCENARIOS: dict[str, Callable[[], uuid.UUID]] = {
    "every_step": every_step,
    "rejections": rejections,
    "operator_commands": operator_commands,
    "fault_recovery": fault_recovery,
    "handoff_and_compensation": handoff_and_compensation,
}


def record(names: list[str]) -> None:
    HISTORIES.mkdir(exist_ok=True)
    for name in names or list(SCENARIOS):
        with tempfile.TemporaryDirectory() as home:
            os.environ["LIFECYCLE_HOME"] = home
            os.environ["LIFECYCLE_EFFECT_TIMEOUT_S"] = "0.5"  # the silent export target
            for variable in ("LIFECYCLE_DATABASE_URL", "LIFECYCLE_BROKER_URL"):
                os.environ.pop(variable, None)
            reset_process_state()
            upgrade()
            run_id = SCENARIOS[name]()
            with transaction() as session:
                history = export_history(session, run_id)
            history["scenario"] = (SCENARIOS[name].__doc__ or "").strip()
            path = HISTORIES / f"{name}.json"
            path.write_text(json.dumps(history, indent=1, sort_keys=True) + "\n")
            print(f"{path}: {len(history['decisions'])} decisions")
            reset_process_state()


if __name__ == "__main__":
    record(sys.argv[1:])
