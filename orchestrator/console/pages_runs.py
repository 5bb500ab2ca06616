"""A run's page (steps, signals, audit, documents, jobs, live progress) and the actions
taken from it: select the framework, retry, reprocess (plan first), new version, cancel,
block, resume. Each action form carries its own key, so posting it twice acts once."""

from __future__ import annotations

import uuid
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse

from orchestrator.cli.timeline import load_history
from orchestrator.console.run_page import actions, document_progress, live_token, step_rows
from orchestrator.console.sessions import ConsoleSession
from orchestrator.console.web import (
    Confirm,
    ConsoleRoute,
    PageError,
    Posted,
    Session,
    action_key,
    confirmed,
    need,
    render,
    see_other,
)
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import SignalType
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import STEP_ORDER
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.service import operations
from orchestrator.service.apikeys import Scope
from orchestrator.service.document_outcomes import DocumentOutcomeView, list_outcomes
from orchestrator.service.effect_views import list_effects
from orchestrator.service.fates import await_fate
from orchestrator.service.framework_choices import FrameworkOption, framework_options
from orchestrator.service.handoffs import list_handoffs
from orchestrator.service.producer import get_run, send_signal
from orchestrator.service.progress import batch_progress
from orchestrator.service.queries import (
    RunFilter,
    get_assessment,
    list_approvals,
    list_artifacts,
    list_runs,
    list_steps,
)
from orchestrator.service.read_models import (
    ArtifactView,
    BatchProgressView,
    RunView,
    SignalReceipt,
    StepView,
)
from orchestrator.service.seal_verification import verify_run

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
    request: Request,
    session: Session,
    run_id: uuid.UUID,
    notice: str | None = None,
    fw: str = "",
) -> HTMLResponse:
    need(session, Scope.READ)
    actor = session.principal.actor
    history = load_history(actor, run_id)
    documents = list_outcomes(actor, history.run.assessment_id)
    batches = batch_progress(actor, run_id)
    return render(
        request,
        session,
        "run.html",
        history=history,
        assessment=get_assessment(actor, history.run.assessment_id),
        notice=notice,
        step_names=[s.value for s in STEP_ORDER],
        effects=list_effects(actor, run_id),
        handoffs=list_handoffs(actor, status=None, run_id=run_id),
        # The records only: hashing every cited file on each view is `lifecycle verify`'s.
        verification=verify_run(actor, run_id, stored_files=False),
        **_live_parts(
            session, history.run, documents, batches, history.steps, history.artifacts, fw
        ),
    )


def _live_parts(
    session: ConsoleSession,
    view: RunView,
    documents: list[DocumentOutcomeView],
    batches: list[BatchProgressView],
    steps: list[StepView],
    artifacts: list[ArtifactView],
    search: str = "",
) -> dict[str, Any]:
    """What the page's moving parts need: the run page and its polled fragment share it."""
    offered = actions(session.principal, view)
    approvals = list_approvals(session.principal.actor, view.id)
    return {
        "run": view,
        "documents": documents,
        "progress": document_progress(documents),
        "steps": step_rows(view, steps, approvals),
        "artifacts": artifacts,
        "actions": offered,
        "key": action_key(),
        "batches": batches,
        "token": live_token(view, documents, batches),
        "frameworks": _frameworks(session, view, search) if offered.can_select_framework else [],
        "search": search,
    }


def _frameworks(session: ConsoleSession, view: RunView, search: str) -> list[FrameworkOption]:
    words = search.lower().split()
    return [
        option
        for option in framework_options(session.principal.actor, view.id)
        if all(w in " ".join((option.name, *option.aliases)).lower() for w in words)
    ]


@router.get("/runs/{run_id}/live", name="console_run_live")
def live(request: Request, session: Session, run_id: uuid.UUID, since: str = "") -> Response:
    """The parts of the run page that move (polled by the page): nothing (204) while the
    run and its documents are as the page last saw them."""
    need(session, Scope.READ)
    actor = session.principal.actor
    view = get_run(actor, run_id)
    documents = list_outcomes(actor, view.assessment_id)
    batches = batch_progress(actor, run_id)
    if since and since == live_token(view, documents, batches):
        return Response(status_code=204, headers={"Cache-Control": "no-store"})
    steps, artifacts = list_steps(actor, run_id), list_artifacts(actor, run_id)
    return render(
        request,
        session,
        "run_live.html",
        **_live_parts(session, view, documents, batches, steps, artifacts),
    )


def _done(actor: Actor, run_id: uuid.UUID, what: str, receipt: SignalReceipt) -> Response:
    """Back to the run's page, saying the signal's fate (waited for up to FATE_WAIT_S)."""
    receipt = await_fate(actor, receipt, FATE_WAIT_S)
    notice = f"{what}: {receipt.fate.value}" + (f" ({receipt.reason})" if receipt.reason else "")
    return see_other(f"/console/runs/{run_id}?notice={quote(notice)}")


@router.post("/runs/{run_id}/framework", name="console_framework")
def framework(
    session: Posted,
    run_id: uuid.UUID,
    key: Key,
    frameworks: Annotated[list[str], Form(max_length=64)] = [],  # noqa: B006 - FastAPI form
    categories: Annotated[list[str], Form(max_length=200)] = [],  # noqa: B006 - FastAPI form
) -> Response:
    """One or more frameworks, and the categories chosen with those that have them
    (posted as "<framework>|<category>")."""
    need(session, Scope.SIGNAL)
    chosen = [name.strip() for name in frameworks if name.strip()]
    if not chosen:
        raise PageError(
            422, "Choose a framework", "Tick at least one framework for this assessment."
        )
    payload: dict[str, Any] = {"frameworks": chosen}
    picked: dict[str, list[str]] = {}
    for entry in categories:
        name, _, category = entry.partition("|")
        if name in chosen and category:
            picked.setdefault(name, []).append(category)
    if picked:
        payload["categories"] = picked
    actor = session.principal.actor
    receipt = send_signal(
        actor, run_id, SignalType.FRAMEWORK_SELECTED, f"console:{key}", payload=payload
    )
    return _done(actor, run_id, "framework selected", receipt)


@router.post("/runs/{run_id}/retry", name="console_retry")
def retry(
    session: Posted,
    run_id: uuid.UUID,
    key: Key,
    reason: Reason = "",
    confirm: Confirm = "",
) -> Response:
    need(session, Scope.OPERATE)
    confirmed(confirm)
    actor = session.principal.actor
    receipt = operations.retry_step(actor, run_id, reason=reason, idempotency_key=f"console:{key}")
    return _done(actor, run_id, "retry", receipt)


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
    return _done(actor, run_id, f"new {artifact_kind} draft", receipt)


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
    confirm: Confirm = "",
) -> Response:
    need(session, Scope.OPERATE)
    confirmed(confirm)
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
    return _done(actor, run_id, f"reprocess {step}", receipt)


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
    confirm: Confirm = "",
) -> Response:
    need(session, Scope.OPERATE)
    command_function = _CONTROLS.get(command)
    if command_function is None:
        raise PageError(404, "Not found", f"There is no {command} command.")
    confirmed(confirm)
    actor = session.principal.actor
    receipt = command_function(actor, run_id, reason=reason, idempotency_key=f"console:{key}")
    return _done(actor, run_id, command, receipt)
