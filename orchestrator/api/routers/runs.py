"""Listing runs, and a run's steps, signals (with their fate), jobs and audit log."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from orchestrator.api.auth import Reader
from orchestrator.api.dependencies import Cursor, Limit
from orchestrator.api.paths import RunId, SignalId
from orchestrator.api.problems import problem_responses
from orchestrator.api.schemas import Page
from orchestrator.contracts.signals import SignalFate
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep
from orchestrator.service.progress import batch_progress
from orchestrator.service.queries import (
    RunFilter,
    get_signal,
    list_audit,
    list_jobs,
    list_runs,
    list_signals,
    list_steps,
)
from orchestrator.service.read_models import (
    AuditEventView,
    BatchProgressView,
    JobView,
    RunView,
    SignalView,
    StepView,
)

router = APIRouter(
    prefix="/api/v1/workflows", tags=["runs"], responses=problem_responses(400, 401, 403, 404, 422)
)


@router.get(
    "",
    response_model=Page[RunView],
    summary="List runs",
    description="Newest first. Filters combine; `waiting_for_approval=true` lists "
    "the runs a reviewer should look at.",
)
def index(
    principal: Reader,
    status: WorkflowStatus | None = None,
    step: AssessmentLifecycleStep | None = None,
    waiting_for_approval: bool | None = None,
    assessment_id: Annotated[uuid.UUID | None, Query(alias="assessmentId")] = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Page[RunView]:
    filters = RunFilter(
        status=status,
        step=step.value if step else None,
        waiting_for_approval=waiting_for_approval,
        assessment_id=assessment_id,
    )
    page = list_runs(principal.actor, filters, limit=limit, cursor=cursor)
    return Page(items=page.items, next_cursor=page.next_cursor)


@router.get(
    "/{workflowRunId}/steps", response_model=list[StepView], summary="A run's step executions"
)
def steps(run_id: RunId, principal: Reader) -> list[StepView]:
    return list_steps(principal.actor, run_id)


@router.get(
    "/{workflowRunId}/signals",
    response_model=Page[SignalView],
    summary="A run's signals and their fate",
    description="In arrival order.",
)
def signals(
    run_id: RunId,
    principal: Reader,
    fate: SignalFate | None = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Page[SignalView]:
    page = list_signals(principal.actor, run_id, fate=fate, limit=limit, cursor=cursor)
    return Page(items=page.items, next_cursor=page.next_cursor)


@router.get(
    "/{workflowRunId}/signals/{signalId}",
    response_model=SignalView,
    summary="One signal and its fate",
)
def signal(run_id: RunId, signal_id: SignalId, principal: Reader) -> SignalView:
    return get_signal(principal.actor, run_id, signal_id)


@router.get("/{workflowRunId}/jobs", response_model=list[JobView], summary="A run's jobs")
def jobs(run_id: RunId, principal: Reader) -> list[JobView]:
    return list_jobs(principal.actor, run_id)


@router.get(
    "/{workflowRunId}/progress",
    response_model=list[BatchProgressView],
    summary="A run's progress through its jobs that fan out: batches done of all, per job",
)
def progress(run_id: RunId, principal: Reader) -> list[BatchProgressView]:
    return batch_progress(principal.actor, run_id)


@router.get(
    "/{workflowRunId}/audit",
    response_model=Page[AuditEventView],
    summary="A run's audit log",
    description="Oldest first.",
)
def audit(
    run_id: RunId, principal: Reader, limit: Limit = 50, cursor: Cursor = None
) -> Page[AuditEventView]:
    page = list_audit(principal.actor, run_id, limit=limit, cursor=cursor)
    return Page(items=page.items, next_cursor=page.next_cursor)
