"""Turns a decision's effects into rows, inside the coordinator's one transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, update
from sqlalchemy.orm import Session

from orchestrator.contracts.jobs import JobRequest, JobStatus
from orchestrator.contracts.steps import StepStatus
from orchestrator.db.models import (
    ApprovalEvent,
    Artifact,
    Assessment,
    AuditEvent,
    Job,
    OutboxMessage,
    StepExecution,
    WorkflowRun,
)
from orchestrator.dispatch import ROUTES
from orchestrator.lifecycle.effects import (
    ArtifactStatusChanged,
    Audit,
    CancelJobs,
    CloseAssessment,
    ConsumeApproval,
    Effect,
    EnqueueJob,
    StepChanged,
    StepsSuperseded,
)

_FINISHED = {StepStatus.COMPLETED, StepStatus.FAILED, StepStatus.CANCELLED}


@dataclass
class EffectWriter:
    """Collects effects of every signal in a batch, then writes them with few statements."""

    session: Session
    run: WorkflowRun
    now: datetime
    new_steps: dict[tuple[str, int], StepExecution] = field(default_factory=dict)
    outbox: list[OutboxMessage] = field(default_factory=list)
    revoked: list[str] = field(default_factory=list)
    """Jobs cancelled in this transaction: workers are told to drop them after commit."""

    def apply(self, effect: Effect, trace_id: str, signal_id: object) -> None:
        match effect:
            case StepChanged():
                self._step(effect)
            case Audit():
                self._audit(effect, trace_id)
            case EnqueueJob():
                self._job(effect, trace_id)
            case ConsumeApproval():
                self._consume(effect, signal_id)
            case CancelJobs():
                self._cancel_jobs()
            case ArtifactStatusChanged():
                self.session.execute(update(Artifact).where(
                    Artifact.run_id == self.run.id, Artifact.kind == effect.kind.value,
                    Artifact.version == effect.version).values(status=effect.status))
            case StepsSuperseded():
                self._supersede(effect)
            case CloseAssessment():
                self.session.execute(update(Assessment).where(
                    Assessment.id == self.run.assessment_id).values(
                    status="closed", closed_at=self.now))

    def _step(self, effect: StepChanged) -> None:
        key = (effect.step.value, effect.attempt)
        finished_at = self.now if effect.status in _FINISHED else None
        row = self.new_steps.get(key)
        if effect.status is StepStatus.RUNNING and row is None:
            row = StepExecution(run_id=self.run.id, step=key[0], attempt=key[1],
                                status=effect.status.value, started_at=self.now)
            self.new_steps[key] = row
            self.session.add(row)
        elif row is not None:
            row.status, row.error, row.finished_at = effect.status.value, effect.error, finished_at
        else:
            self.session.execute(update(StepExecution).where(
                StepExecution.run_id == self.run.id, StepExecution.step == key[0],
                StepExecution.attempt == key[1]).values(
                status=effect.status.value, error=effect.error, finished_at=finished_at))

    def _supersede(self, effect: StepsSuperseded) -> None:
        names = [step.value for step in effect.steps]
        for (step, _), row in self.new_steps.items():
            if step in names:
                row.status = StepStatus.SUPERSEDED.value
        self.session.execute(update(StepExecution).where(
            StepExecution.run_id == self.run.id, StepExecution.step.in_(names),
            StepExecution.status != StepStatus.SUPERSEDED.value).values(
            status=StepStatus.SUPERSEDED.value,
            finished_at=func.coalesce(StepExecution.finished_at, self.now)))

    def _audit(self, effect: Audit, trace_id: str) -> None:
        run = self.run
        self.session.add(AuditEvent(
            tenant_id=run.tenant_id, organization_id=run.organization_id,
            assessment_id=run.assessment_id, run_id=run.id,
            step=effect.step.value if effect.step else None, event_type=effect.event_type.value,
            actor_id=effect.actor_id, trace_id=trace_id, event_metadata=effect.metadata,
            created_at=self.now))

    def _job(self, effect: EnqueueJob, trace_id: str) -> None:
        run = self.run
        route = ROUTES[effect.kind]
        request = JobRequest(
            job_id=effect.job_id, kind=effect.kind, run_id=run.id, step=effect.step,
            attempt=effect.attempt, idempotency_key=f"job:{effect.job_id}", trace_id=trace_id,
            tenant_id=run.tenant_id, organization_id=run.organization_id,
            assessment_id=run.assessment_id, actor_id=effect.requested_by,
            parameters=effect.parameters)
        body = request.model_dump(mode="json")
        self.session.add(Job(
            id=effect.job_id, run_id=run.id, step=effect.step.value,
            step_attempt=effect.attempt, kind=effect.kind.value, queue=route.queue,
            status=JobStatus.QUEUED.value, deliveries=0, request=body, created_at=self.now,
            updated_at=self.now))
        message = OutboxMessage(run_id=run.id, task_name=route.task_name, queue=route.queue,
                                task_id=effect.job_id, body=body, created_at=self.now)
        self.session.add(message)
        self.outbox.append(message)

    def _consume(self, effect: ConsumeApproval, signal_id: object) -> None:
        self.session.execute(update(ApprovalEvent).where(
            ApprovalEvent.id == effect.approval_event_id).values(
            consumed_by_signal_id=signal_id, consumed_at=self.now))
        if effect.opens_gate:
            self.session.execute(update(Artifact).where(
                Artifact.run_id == self.run.id, Artifact.kind == effect.artifact_kind.value,
                Artifact.version == effect.artifact_version).values(status="approved"))

    def _cancel_jobs(self) -> None:
        # Queued jobs never start (the job runtime checks its row); running ones see the
        # run cancelled before they commit, and their late outcome is ignored.
        cancelled = self.session.scalars(update(Job).where(
            Job.run_id == self.run.id,
            Job.status.in_([JobStatus.QUEUED.value, JobStatus.STARTED.value])).values(
            status=JobStatus.CANCELLED.value, updated_at=self.now).returning(Job.id))
        self.revoked.extend(cancelled)
