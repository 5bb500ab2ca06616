"""Approval wait policies: remind, escalate, then block a wait that lasts too long.

Each gate has a policy (settings: `approval_default`, `approval_policies`). For each
stage and gate, a time-window cursor over open waits (`step_executions` in status
'waiting', by `started_at`) reads only the waits that crossed the stage's threshold
since the last sweep. Each stage fires once per wait (`step:attempt`): an audit event
and a notification; the block stage also sends `assessment_blocked` through the inbox.
A wait that is not waiting for approval when it crosses a threshold (blocked by
someone, say) is skipped for that stage.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.config.sweep_registry import sweep
from orchestrator.config.sweeps import ApprovalTiming
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.events import NotificationEvent
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import StepExecution, WorkflowRun
from orchestrator.db.ops_models import WAITING_STEP
from orchestrator.db.session import transaction
from orchestrator.db.sql import aware
from orchestrator.lifecycle.definition import APPROVED_AT
from orchestrator.sweeps.cursors import move_cursor, open_window, read_window
from orchestrator.sweeps.marks import claim_mark
from orchestrator.sweeps.sweep_actions import Occasion, SweepMessages, announce, request_block


class Stage(StrEnum):
    REMINDED = "reminded"
    ESCALATED = "escalated"
    BLOCKED = "approval_blocked"

    def after(self, policy: ApprovalTiming) -> float:
        return {
            Stage.REMINDED: policy.remind_after_s,
            Stage.ESCALATED: policy.escalate_after_s,
            Stage.BLOCKED: policy.block_after_s,
        }[self]


_ANNOUNCED: dict[Stage, tuple[AuditEventType | None, NotificationEvent]] = {
    Stage.REMINDED: (
        AuditEventType.LIFECYCLE_WORKFLOW_APPROVAL_REMINDER_SENT,
        NotificationEvent.APPROVAL_REMINDER,
    ),
    Stage.ESCALATED: (
        AuditEventType.LIFECYCLE_WORKFLOW_APPROVAL_ESCALATED,
        NotificationEvent.APPROVAL_ESCALATED,
    ),
    Stage.BLOCKED: (None, NotificationEvent.APPROVAL_BLOCKED),
}


@dataclass(frozen=True)
class Wait:
    run_id: uuid.UUID
    step: Step
    attempt: int
    since: datetime

    @property
    def key(self) -> str:
        return f"{self.step.value}:{self.attempt}"


@sweep("approval_waits")
def sweep_approval_waits() -> dict[str, int]:
    """Fire every stage that became due; returns how many fired per stage."""
    now = utcnow()
    fired = {stage.value: 0 for stage in Stage}
    after = SweepMessages()
    with transaction() as session:
        for stage in Stage:
            for gate in APPROVED_AT:
                fired[stage.value] += _sweep_gate(session, stage, gate, now, after)
    after.send()
    return fired


def _sweep_gate(
    session: Session, stage: Stage, gate: Step, now: datetime, after: SweepMessages
) -> int:
    policy = get_settings().sweeps.gate(gate)
    window = open_window(
        session,
        f"approval:{stage.value}:{gate.value}",
        now - timedelta(seconds=stage.after(policy)),
    )
    query = select(StepExecution.run_id, StepExecution.attempt).where(
        WAITING_STEP, StepExecution.step == gate.value
    )
    rows, position = read_window(
        session,
        query,
        window,
        StepExecution.started_at,
        StepExecution.id,
        int,
        get_settings().sweeps.batch,
    )
    waits = [Wait(run_id, gate, attempt, aware(since)) for run_id, attempt, since, _ in rows]
    runs = _waiting_runs(session, {wait.run_id for wait in waits})
    fired = 0
    for wait in waits:
        run = runs.get(wait.run_id)
        if run is not None and _still_waiting(run, wait):
            fired += _fire(
                session, stage, policy, Occasion(run, stage.value, wait.key, now), wait, after
            )
    move_cursor(session, window, position, now)
    return fired


def _waiting_runs(session: Session, run_ids: set[uuid.UUID]) -> dict[uuid.UUID, WorkflowRun]:
    if not run_ids:
        return {}
    rows = session.scalars(select(WorkflowRun).where(WorkflowRun.id.in_(run_ids)))
    return {run.id: run for run in rows}


def _still_waiting(run: WorkflowRun, wait: Wait) -> bool:
    attempts = (run.context or {}).get("attempts", {})
    return (
        run.status == WorkflowStatus.WAITING_FOR_APPROVAL.value
        and run.current_step == wait.step.value
        and int(attempts.get(wait.step.value, 0)) == wait.attempt
    )


def _fire(
    session: Session,
    stage: Stage,
    policy: ApprovalTiming,
    occasion: Occasion,
    wait: Wait,
    after: SweepMessages,
) -> int:
    waited = (occasion.now - wait.since).total_seconds()
    details = {
        "stage": stage.value,
        "awaits": APPROVED_AT[wait.step].value,
        "attempt": wait.attempt,
        "waiting_since": wait.since.isoformat(),
        "waited_s": int(waited),
        "threshold_s": stage.after(policy),
    }
    if not claim_mark(session, occasion.run.id, stage.value, wait.key, occasion.now, details):
        return 0  # another sweep fired it
    audit, notification = _ANNOUNCED[stage]
    if stage is Stage.BLOCKED:
        details["reason"] = (
            f"no approval of {details['awaits']} after {int(waited)} s "
            f"waiting (block after {stage.after(policy):g} s)"
        )
        request_block(session, occasion, str(details["reason"]), after)
        # Its audit event is the coordinator's lifecycle_workflow_blocked, written when it
        # applies the signal (actor system:sweeper, with this reason).
        audit = None
    announce(session, occasion, audit, notification, wait.step.value, details, after)
    return 1
