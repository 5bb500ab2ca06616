"""Turns a decision's effects into rows, inside the coordinator's one transaction.

New rows are buffered and inserted together (one multi-row INSERT per table) when the
batch ends, or before a statement that must see them (a cancel or a supersede updates
rows by run). Statements are Core, built once: no ORM unit of work on the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Executable, bindparam, func, insert, update
from sqlalchemy.orm import Session

from orchestrator.contracts.jobs import JobRequest, JobStatus
from orchestrator.contracts.steps import StepStatus
from orchestrator.db.tables import APPROVALS, ARTIFACTS, ASSESSMENTS, AUDIT, JOBS, OUTBOX, STEPS
from orchestrator.engine.outbox import OutboxEntry
from orchestrator.engine.outside_effects import OutsideEffects
from orchestrator.engine.routing import ROUTES
from orchestrator.engine.run_events import RunEvents
from orchestrator.engine.run_rows import RunIdentity
from orchestrator.engine.tenant_order import job_priority
from orchestrator.lifecycle.effects import (
    ArtifactStatusChanged,
    Audit,
    CancelJobs,
    CloseAssessment,
    Compensate,
    ConsumeApproval,
    Effect,
    EnqueueJob,
    PublishDraft,
    StepChanged,
    StepsSuperseded,
)
from orchestrator.observability.tracing import current_traceparent

_FINISHED = {StepStatus.COMPLETED, StepStatus.FAILED, StepStatus.CANCELLED}


_STEP_UPDATE = (
    update(STEPS)
    .where(
        STEPS.c.run_id == bindparam("of_run"),
        STEPS.c.step == bindparam("step_name"),
        STEPS.c.attempt == bindparam("step_attempt"),
    )
    .values(
        status=bindparam("new_status"),
        error=bindparam("new_error"),
        finished_at=bindparam("finished", type_=STEPS.c.finished_at.type),
    )
)
_SUPERSEDE = (
    update(STEPS)
    .where(
        STEPS.c.run_id == bindparam("of_run"),
        STEPS.c.step.in_(bindparam("names", expanding=True)),
        STEPS.c.status != StepStatus.SUPERSEDED.value,
    )
    .values(
        status=StepStatus.SUPERSEDED.value,
        finished_at=func.coalesce(
            STEPS.c.finished_at, bindparam("now", type_=STEPS.c.finished_at.type)
        ),
    )
)
_ARTIFACT_STATUS = (
    update(ARTIFACTS)
    .where(
        ARTIFACTS.c.run_id == bindparam("of_run"),
        ARTIFACTS.c.kind == bindparam("artifact_kind"),
        ARTIFACTS.c.version == bindparam("artifact_version"),
    )
    .values(status=bindparam("new_status"))
)
_CONSUME = (
    update(APPROVALS)
    .where(APPROVALS.c.id == bindparam("approval_id"))
    .values(
        consumed_by_signal_id=bindparam("signal_id", type_=APPROVALS.c.consumed_by_signal_id.type),
        consumed_at=bindparam("now", type_=APPROVALS.c.consumed_at.type),
    )
)
_CLOSE = (
    update(ASSESSMENTS)
    .where(ASSESSMENTS.c.id == bindparam("assessment_id"))
    .values(status="closed", closed_at=bindparam("now", type_=ASSESSMENTS.c.closed_at.type))
)
_CANCEL_JOBS = (
    update(JOBS)
    .where(
        JOBS.c.run_id == bindparam("of_run"),
        JOBS.c.status.in_([JobStatus.QUEUED.value, JobStatus.STARTED.value]),
    )
    .values(
        status=JobStatus.CANCELLED.value, updated_at=bindparam("now", type_=JOBS.c.updated_at.type)
    )
    .returning(JOBS.c.id)
)


def execute_rows(session: Session, statement: Executable, rows: list[dict[str, Any]]) -> None:
    """One row: a plain execute; several: one executemany (a multi-row INSERT, or a
    pipelined batch). A one-row executemany would pay the batching machinery for nothing."""
    session.execute(statement, rows[0] if len(rows) == 1 else rows)


@dataclass
class EffectWriter:
    """Collects effects of every signal in a batch, then writes them with few statements.

    Call `flush()` before the transaction ends: buffered rows are written then.
    """

    session: Session
    run: RunIdentity
    now: datetime
    subscribed: bool | None = None
    """Whether the run's tenant has an active webhook subscription, read with the run's
    lock (None: not read; asked when run events are written)."""
    new_steps: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    outbox: list[OutboxEntry] = field(default_factory=list)
    revoked: list[str] = field(default_factory=list)
    """Jobs cancelled in this transaction: workers are told to drop them after commit."""
    deliveries: list[int] = field(default_factory=list)
    """Webhook deliveries of run events recorded here: dispatched after commit."""
    events: RunEvents | None = None
    outside: OutsideEffects | None = None
    """Effects outside the database recorded here: sent to a worker after commit."""
    _jobs: list[dict[str, Any]] = field(default_factory=list)
    _messages: list[dict[str, Any]] = field(default_factory=list)
    _audits: list[dict[str, Any]] = field(default_factory=list)

    def apply(self, effect: Effect, trace_id: str, signal_id: object) -> None:
        match effect:
            case StepChanged():
                self._step(effect)
            case Audit():
                self._audit(effect, trace_id, signal_id)
            case EnqueueJob():
                self._job(effect, trace_id)
            case ConsumeApproval():
                self._consume(effect, signal_id)
            case CancelJobs():
                self._cancel_jobs()
            case ArtifactStatusChanged():
                self._set_artifact_status(effect.kind.value, effect.version, effect.status)
            case StepsSuperseded():
                self._supersede(effect)
            case CloseAssessment():
                self.session.execute(
                    _CLOSE, {"assessment_id": self.run.assessment_id, "now": self.now}
                )
            case PublishDraft() | Compensate():
                self._outside_effect(effect, trace_id, signal_id)

    def _outside_effect(
        self, effect: PublishDraft | Compensate, trace_id: str, signal_id: object
    ) -> None:
        if isinstance(effect, PublishDraft):
            self._outside().publish(effect)
            return
        # Webhook events of this batch are written first: they may be withdrawn.
        self.flush()
        for audit in self._outside().compensate(effect):
            self._audit(audit, trace_id, signal_id)

    def _outside(self) -> OutsideEffects:
        if self.outside is None:
            self.outside = OutsideEffects(self.session, self.run, self.now)
        return self.outside

    @property
    def recorded_effects(self) -> list[Any]:
        return self.outside.recorded if self.outside is not None else []

    def flush(self) -> None:
        """Insert every buffered row, one statement per table, in the order made."""
        if self.events is not None and self.events.pending:
            self.deliveries += self.events.write(self.session, self.now)
        for table, rows in (
            (STEPS, list(self.new_steps.values())),
            (JOBS, self._jobs),
            (OUTBOX, self._messages),
            (AUDIT, self._audits),
        ):
            if rows:
                execute_rows(self.session, insert(table), rows)
        self.new_steps.clear()
        self._jobs.clear()
        self._messages.clear()
        self._audits.clear()

    def _step(self, effect: StepChanged) -> None:
        key = (effect.step.value, effect.attempt)
        finished_at = self.now if effect.status in _FINISHED else None
        row = self.new_steps.get(key)
        if effect.status is StepStatus.RUNNING and row is None:
            self.new_steps[key] = {
                "run_id": self.run.id,
                "step": key[0],
                "attempt": key[1],
                "status": effect.status.value,
                "error": None,
                "started_at": self.now,
                "finished_at": None,
            }
        elif row is not None:
            row.update(status=effect.status.value, error=effect.error, finished_at=finished_at)
        else:
            self.session.execute(
                _STEP_UPDATE,
                {
                    "of_run": self.run.id,
                    "step_name": key[0],
                    "step_attempt": key[1],
                    "new_status": effect.status.value,
                    "new_error": effect.error,
                    "finished": finished_at,
                },
            )

    def _supersede(self, effect: StepsSuperseded) -> None:
        self.flush()  # steps started in this batch are superseded like the older ones
        self.session.execute(
            _SUPERSEDE,
            {
                "of_run": self.run.id,
                "now": self.now,
                "names": [step.value for step in effect.steps],
            },
        )

    def _audit(self, effect: Audit, trace_id: str, cause: object) -> None:
        run = self.run
        if self.events is None:
            self.events = RunEvents(
                run.id, run.tenant_id, run.organization_id, run.assessment_id, self.subscribed
            )
        self.events.collect(
            effect.event_type, effect.step.value if effect.step else None, effect.metadata, cause
        )
        self._audits.append(
            {
                "tenant_id": run.tenant_id,
                "organization_id": run.organization_id,
                "assessment_id": run.assessment_id,
                "run_id": run.id,
                "step": effect.step.value if effect.step else None,
                "event_type": effect.event_type.value,
                "actor_id": effect.actor_id,
                "trace_id": trace_id,
                "metadata": effect.metadata,
                "created_at": self.now,
            }
        )

    def _job(self, effect: EnqueueJob, trace_id: str) -> None:
        run = self.run
        route = ROUTES[effect.kind]
        request = JobRequest(
            job_id=effect.job_id,
            kind=effect.kind,
            run_id=run.id,
            step=effect.step,
            attempt=effect.attempt,
            idempotency_key=f"job:{effect.job_id}",
            trace_id=trace_id,
            tenant_id=run.tenant_id,
            organization_id=run.organization_id,
            assessment_id=run.assessment_id,
            actor_id=effect.requested_by,
            parameters=effect.parameters,
            traceparent=current_traceparent(),
        )
        body = request.model_dump(mode="json")
        self._jobs.append(
            {
                "id": effect.job_id,
                "run_id": run.id,
                "step": effect.step.value,
                "step_attempt": effect.attempt,
                "kind": effect.kind.value,
                "queue": route.queue,
                "status": JobStatus.QUEUED.value,
                "deliveries": 0,
                "request": body,
                "summary": None,
                "error": None,
                "created_at": self.now,
                "started_at": None,
                "finished_at": None,
                "updated_at": self.now,
            }
        )
        self._messages.append(
            {
                "run_id": run.id,
                "task_name": route.task_name,
                "queue": route.queue,
                "task_id": effect.job_id,
                "body": body,
                "created_at": self.now,
                # Published right after this commit; a failed send clears it (outbox.py).
                "published_at": self.now,
            }
        )
        order = job_priority(self.session, run.tenant_id, route.queue, effect.job_id)
        self.outbox.append(
            OutboxEntry(route.task_name, route.queue, effect.job_id, body, priority=order)
        )

    def _consume(self, effect: ConsumeApproval, signal_id: object) -> None:
        self.session.execute(
            _CONSUME,
            {"approval_id": effect.approval_event_id, "signal_id": signal_id, "now": self.now},
        )
        if effect.opens_gate:
            self._set_artifact_status(
                effect.artifact_kind.value, effect.artifact_version, "approved"
            )

    def _set_artifact_status(self, kind: str, version: int, status: str) -> None:
        self.session.execute(
            _ARTIFACT_STATUS,
            {
                "of_run": self.run.id,
                "artifact_kind": kind,
                "artifact_version": version,
                "new_status": status,
            },
        )

    def _cancel_jobs(self) -> None:
        # Queued jobs never start (the job runtime checks its row); running ones see the
        # run cancelled before they commit, and their late outcome is ignored.
        self.flush()  # a job queued earlier in this batch is cancelled too
        cancelled = self.session.scalars(_CANCEL_JOBS, {"of_run": self.run.id, "now": self.now})
        self.revoked.extend(cancelled)
