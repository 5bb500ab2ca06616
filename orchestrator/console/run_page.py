"""What a run's page shows: the 20 steps with their latest attempt and who approved what,
progress of long work (documents done of total), and the actions open to this person."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from orchestrator.console.queue import acting_roles, state_of_view
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import STEP_ORDER
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.definition import APPROVED_AT, STEP_SPECS
from orchestrator.service.apikeys import Principal, Scope
from orchestrator.service.document_outcomes import DocumentOutcomeView
from orchestrator.service.read_models import ApprovalRecordView, RunView, StepView

FINISHED_DOCUMENTS = frozenset({"ingested", "duplicate", "failed"})


@dataclass(frozen=True)
class StepRow:
    step: Step
    kind: str
    status: str
    attempt: int | None
    duration: timedelta | None
    error: str | None
    approvals: list[ApprovalRecordView]
    current: bool


def step_rows(
    run: RunView, steps: list[StepView], approvals: list[ApprovalRecordView]
) -> list[StepRow]:
    latest: dict[str, StepView] = {}
    for execution in steps:
        latest[execution.step] = execution  # listed in the order they began
    rows = []
    for step in STEP_ORDER:
        seen = latest.get(step.value)
        gate = APPROVED_AT.get(step)
        mine = [a for a in approvals if gate is not None and a.artifact_kind == gate.value]
        rows.append(
            StepRow(
                step=step,
                kind=STEP_SPECS[step].kind.value,
                status=seen.status if seen else "not started",
                attempt=seen.attempt if seen else None,
                duration=_duration(seen.started_at, seen.finished_at) if seen else None,
                error=seen.error if seen else None,
                approvals=mine,
                current=run.current_step == step.value,
            )
        )
    return rows


def _duration(start: datetime, end: datetime | None) -> timedelta | None:
    return end - start if end is not None else None


@dataclass(frozen=True)
class Progress:
    done: int
    total: int


def document_progress(documents: list[DocumentOutcomeView]) -> Progress:
    return Progress(sum(1 for d in documents if d.status in FINISHED_DOCUMENTS), len(documents))


@dataclass(frozen=True)
class Actions:
    """Which forms the run page offers this person now."""

    review: ArtifactKind | None
    review_version: int | None
    can_select_framework: bool
    can_request_new_version: ArtifactKind | None
    can_retry: bool
    can_resume: bool
    can_operate: bool


def actions(principal: Principal, run: RunView) -> Actions:
    status = WorkflowStatus(run.status)
    state = state_of_view(run)
    step = Step(run.current_step) if run.current_step else None
    gate = APPROVED_AT.get(step) if step else None
    operate = principal.allows(Scope.OPERATE) and not status.is_terminal
    review = (
        gate
        if status is WorkflowStatus.WAITING_FOR_APPROVAL
        and gate is not None
        and acting_roles(principal, state, gate)
        else None
    )
    sent_back = (
        gate
        if status is WorkflowStatus.WAITING_FOR_INPUT
        and gate is not None
        and state.rejected.get(gate) == state.artifacts.get(gate)
        else None
    )
    return Actions(
        review=review,
        review_version=state.artifacts.get(gate) if review and gate else None,
        can_select_framework=principal.allows(Scope.SIGNAL)
        and status is WorkflowStatus.WAITING_FOR_INPUT
        and step is Step.WAIT_FOR_FRAMEWORK_SELECTION,
        can_request_new_version=sent_back if operate else None,
        can_retry=operate and status is WorkflowStatus.FAILED,
        can_resume=operate and status is WorkflowStatus.BLOCKED,
        can_operate=operate,
    )
