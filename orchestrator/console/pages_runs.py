"""A run's page (steps, signals, audit, documents, jobs, live progress) and the actions
taken from it: select the framework, retry, reprocess (plan first), new version, cancel,
block, resume. Each action form carries its own key, so posting it twice acts once."""

from __future__ import annotations

import uuid
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse

from orchestrator.catalog.door import selectable_names
from orchestrator.cli.timeline import load_history
from orchestrator.console.run_page import actions, document_progress, step_rows
from orchestrator.console.web import (
    ConsoleRoute,
    PageError,
    Posted,
    Session,
    action_key,
    need,
    render,
    see_other,
)
from orchestrator.contracts.signals import SignalType
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import STEP_ORDER
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.busy import retry_busy
from orchestrator.db.session import read_transaction
from orchestrator.service import operations
from orchestrator.service.apikeys import Scope
from orchestrator.service.document_outcomes import list_outcomes
from orchestrator.service.fates import await_fate
from orchestrator.service.producer import get_run, send_signal
from orchestrator.service.queries import RunFilter, get_assessment, list_runs
from orchestrator.service.read_models import SignalReceipt

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

FATE_WAIT_S = 5.0
Key = Annotated[str, Form(min_length=8, max_length=64)]
Reason = Annotated[str, Form(max_length=2000)]


@router.get("/runs", name="console_runs")
def runs(
    request: Request,
    session: Session,
    status: str | None = None,
    step: str | None = None,
    cursor: str | None = None,
) -> HTMLResponse:
    need(session, Scope.READ)
    chosen_status = status if status in {s.value for s in WorkflowStatus} else None
    chosen_step = step if step in {s.value for s in Step} else None
    filters = RunFilter(
        status=WorkflowStatus(chosen_status) if chosen_status else None, step=chosen_step
    )
    page = list_runs(session.principal.actor, filters, limit=50, cursor=cursor)
    return render(
        request,
        session,
        "runs.html",
        page=page,
        status=chosen_status,
        step=chosen_step,
        statuses=[s.value for s in WorkflowStatus],
        steps=[s.value for s in STEP_ORDER],
    )


@router.get("/runs/{run_id}", name="console_run")
def run(
    request: Request, session: Session, run_id: uuid.UUID, notice: str | None = None
) -> HTMLResponse:
    need(session, Scope.READ)
    actor = session.principal.actor
    history = load_history(actor, run_id)
    documents = list_outcomes(actor, history.run.assessment_id)
    return render(
        request,
        session,
        "run.html",
        history=history,
        run=history.run,
        assessment=get_assessment(actor, history.run.assessment_id),
        steps=step_rows(history.run, history.steps, history.approvals),
        documents=documents,
        progress=document_progress(documents),
        actions=actions(session.principal, history.run),
        key=action_key(),
        notice=notice,
        step_names=[s.value for s in STEP_ORDER],
        frameworks=_selectable(history.run.context),
    )


@router.get("/runs/{run_id}/live", name="console_run_live")
def live(request: Request, session: Session, run_id: uuid.UUID) -> HTMLResponse:
    """The part of the run page that changes while it runs (polled by the page)."""
    need(session, Scope.READ)
    actor = session.principal.actor
    view = get_run(actor, run_id)
    documents = list_outcomes(actor, view.assessment_id)
    return render(
        request, session, "run_live.html", run=view, progress=document_progress(documents)
    )


def _done(run_id: uuid.UUID, what: str, receipt: SignalReceipt) -> Response:
    notice = f"{what}: {receipt.fate.value}" + (f" ({receipt.reason})" if receipt.reason else "")
    return see_other(f"/console/runs/{run_id}?notice={quote(notice)}")


def _confirmed(confirm: str) -> None:
    if confirm != "yes":
        raise PageError(422, "Not confirmed", "Tick the confirmation box to go ahead.")


@router.post("/runs/{run_id}/framework", name="console_framework")
def framework(
    session: Posted,
    run_id: uuid.UUID,
    key: Key,
    framework: Annotated[str, Form(min_length=1, max_length=64)] = "SCF",
) -> Response:
    need(session, Scope.SIGNAL)
    actor = session.principal.actor
    receipt = send_signal(
        actor,
        run_id,
        SignalType.FRAMEWORK_SELECTED,
        f"console:{key}",
        payload={"framework": framework.strip()},
    )
    return _done(run_id, "framework selected", await_fate(actor, receipt, FATE_WAIT_S))


@router.post("/runs/{run_id}/retry", name="console_retry")
def retry(
    session: Posted,
    run_id: uuid.UUID,
    key: Key,
    reason: Reason = "",
    confirm: Annotated[str, Form()] = "",
) -> Response:
    need(session, Scope.OPERATE)
    _confirmed(confirm)
    actor = session.principal.actor
    receipt = operations.retry_step(actor, run_id, reason=reason, idempotency_key=f"console:{key}")
    return _done(run_id, "retry", await_fate(actor, receipt, FATE_WAIT_S))


@router.post("/runs/{run_id}/new-version", name="console_new_version")
def new_version(
    session: Posted,
    run_id: uuid.UUID,
    key: Key,
    reason: Reason = "",
    artifact_kind: Annotated[str, Form(max_length=64)] = "",
) -> Response:
    need(session, Scope.OPERATE)
    actor = session.principal.actor
    receipt = operations.request_new_version(
        actor, run_id, artifact_kind, reason=reason, idempotency_key=f"console:{key}"
    )
    return _done(run_id, f"new {artifact_kind} draft", await_fate(actor, receipt, FATE_WAIT_S))


@router.post("/runs/{run_id}/reprocess/plan", name="console_reprocess_plan")
def reprocess_plan(
    request: Request,
    session: Posted,
    run_id: uuid.UUID,
    key: Key,
    step: Annotated[str, Form(max_length=64)] = "",
    reason: Reason = "",
    new_version: Annotated[str, Form()] = "",
) -> HTMLResponse:
    """The dry run: what reprocessing would supersede, shown before the confirm."""
    need(session, Scope.OPERATE)
    plan = operations.reprocess_step(
        session.principal.actor,
        run_id,
        step,
        reason=reason,
        idempotency_key=f"console:{key}",
        new_version=new_version == "yes",
        dry_run=True,
    )
    return render(
        request,
        session,
        "reprocess_plan.html",
        run=get_run(session.principal.actor, run_id),
        plan=plan.to_json() if not isinstance(plan, SignalReceipt) else {},
        step=step,
        reason=reason,
        new_version=new_version,
        key=key,
    )


@router.post("/runs/{run_id}/reprocess", name="console_reprocess")
def reprocess(
    session: Posted,
    run_id: uuid.UUID,
    key: Key,
    step: Annotated[str, Form(max_length=64)] = "",
    reason: Reason = "",
    new_version: Annotated[str, Form()] = "",
    confirm: Annotated[str, Form()] = "",
) -> Response:
    need(session, Scope.OPERATE)
    _confirmed(confirm)
    actor = session.principal.actor
    receipt = operations.reprocess_step(
        actor,
        run_id,
        step,
        reason=reason,
        idempotency_key=f"console:{key}",
        new_version=new_version == "yes",
    )
    assert isinstance(receipt, SignalReceipt)
    return _done(run_id, f"reprocess {step}", await_fate(actor, receipt, FATE_WAIT_S))


_CONTROLS = {
    "cancel": operations.cancel_run,
    "block": operations.block_run,
    "resume": operations.resume_run,
}


@router.post("/runs/{run_id}/control/{command}", name="console_control")
def control(
    session: Posted,
    run_id: uuid.UUID,
    command: str,
    key: Key,
    reason: Reason = "",
    confirm: Annotated[str, Form()] = "",
) -> Response:
    need(session, Scope.OPERATE)
    command_function = _CONTROLS.get(command)
    if command_function is None:
        raise PageError(404, "Not found", f"There is no {command} command.")
    _confirmed(confirm)
    actor = session.principal.actor
    receipt = command_function(actor, run_id, reason=reason, idempotency_key=f"console:{key}")
    return _done(run_id, command, await_fate(actor, receipt, FATE_WAIT_S))


@retry_busy
def _selectable(run_context: dict[str, Any]) -> list[str]:
    with read_transaction() as db:
        return selectable_names(db, run_context)
