"""Reviewing a draft: its tables, what changed since the previous version, the report
inline, and the decision (approve, reject, request changes) with a comment."""

from __future__ import annotations

import uuid
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import FileResponse, HTMLResponse

from orchestrator.config.settings import get_settings
from orchestrator.console import artifacts as rendering
from orchestrator.console.decisions import decide
from orchestrator.console.queue import acting_roles, state_of_view
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
from orchestrator.contracts.errors import NotFound
from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind
from orchestrator.lifecycle.approval_checks import ApprovalDecision
from orchestrator.service.amendments import ASSESSED, ROWS, amend_artifact, row_name
from orchestrator.service.apikeys import Scope
from orchestrator.service.producer import get_run
from orchestrator.service.queries import get_artifact, list_approvals, list_artifacts

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

APPROVABLE = frozenset(APPROVAL_SIGNALS.values())


def _kind(value: str) -> ArtifactKind:
    try:
        return ArtifactKind(value)
    except ValueError as error:
        raise PageError(404, "Not found", f"There is no artifact kind {value!r}.") from error


@router.get("/runs/{run_id}/artifacts/{kind}", name="console_review")
def review(
    request: Request,
    session: Session,
    run_id: uuid.UUID,
    kind: str,
    version: int | None = None,
    notice: str | None = None,
) -> HTMLResponse:
    need(session, Scope.READ)
    actor = session.principal.actor
    artifact_kind = _kind(kind)
    run = get_run(actor, run_id)
    versions = list_artifacts(actor, run_id, artifact_kind.value)
    if not versions:
        raise NotFound(f"run {run_id} has no {artifact_kind.value} draft yet")
    chosen = (
        next((v for v in versions if v.version == version), None)
        if version is not None
        else versions[-1]
    )
    if chosen is None:
        raise NotFound(f"run {run_id} has no {artifact_kind.value} version {version}")
    current = get_artifact(actor, run_id, chosen.id)
    previous_view = next((v for v in reversed(versions) if v.version < chosen.version), None)
    changes = None
    if previous_view is not None:
        previous = get_artifact(actor, run_id, previous_view.id)
        changes = rendering.diff(artifact_kind, previous.content, current.content)
    state = state_of_view(run)
    waiting_version = state.artifacts.get(artifact_kind)
    roles = (
        acting_roles(session.principal, state, artifact_kind)
        if artifact_kind in APPROVABLE
        and waiting_version == chosen.version
        and state.rejected.get(artifact_kind) != chosen.version
        and not state.status.is_terminal
        else ()
    )
    approvals = [a for a in list_approvals(actor, run_id) if a.artifact_kind == artifact_kind.value]
    amendable = (
        _row_names(artifact_kind, current.content)
        if session.principal.allows(Scope.APPROVE)
        and chosen.version == versions[-1].version
        and chosen.status == "draft"
        and not state.status.is_terminal
        else []
    )
    return render(
        request,
        session,
        "review.html",
        run=run,
        kind=artifact_kind,
        artifact=chosen,
        versions=versions,
        content=current.content,
        tables=rendering.tables(artifact_kind, current.content),
        summary=rendering.summary(current.content),
        previous=previous_view,
        changes=changes,
        roles=roles,
        approvals=approvals,
        key=action_key(),
        decisions=[d.value for d in ApprovalDecision],
        amendable=amendable,
        assessed=ASSESSED,
        notice=notice,
    )


def _row_names(kind: ArtifactKind, content: dict[str, Any]) -> list[str]:
    """The rows of a draft a reviewer may amend (none for kinds without rows)."""
    if kind not in ROWS:
        return []
    rows, key = ROWS[kind]
    found = [r for r in content.get(rows) or [] if isinstance(r, dict) and key in r]
    return [row_name(found, key, r) for r in found]


@router.get("/runs/{run_id}/artifacts/{kind}/{version}/file", name="console_artifact_file")
def artifact_file(session: Session, run_id: uuid.UUID, kind: str, version: int) -> Response:
    """The rendered file (the report), shown inline in the review page's frame."""
    need(session, Scope.READ)
    actor = session.principal.actor
    artifact_kind = _kind(kind)
    found = next(
        (v for v in list_artifacts(actor, run_id, artifact_kind.value) if v.version == version),
        None,
    )
    if found is None or not found.has_file:
        raise NotFound(f"run {run_id} has no {artifact_kind.value} file of version {version}")
    content = get_artifact(actor, run_id, found.id)
    path = content.file
    if (
        path is None
        or not path.resolve().is_relative_to(get_settings().resolved_storage_dir)
        or not path.is_file()
    ):
        raise NotFound(f"the file of {artifact_kind.value} v{version} is missing from storage")
    return FileResponse(
        path,
        media_type=found.media_type,
        headers={
            "Content-Security-Policy": "sandbox; default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:; frame-ancestors 'self'",
            "X-Content-Type-Options": "nosniff",
        },
    )


@router.post("/runs/{run_id}/artifacts/{kind}/decision", name="console_decide")
def decision(
    session: Posted,
    run_id: uuid.UUID,
    kind: str,
    version: Annotated[int, Form(ge=1)],
    key: Annotated[str, Form(min_length=8, max_length=64)],
    decision: Annotated[str, Form(max_length=32)] = "",
    role: Annotated[str, Form(max_length=64)] = "",
    comment: Annotated[str, Form(max_length=4000)] = "",
) -> Response:
    need(session, Scope.APPROVE)
    artifact_kind = _kind(kind)
    try:
        verdict = ApprovalDecision(decision)
    except ValueError as error:
        raise PageError(
            422, "Choose a decision", "Choose approve, reject or request changes."
        ) from error
    if verdict is not ApprovalDecision.APPROVED and not comment.strip():
        raise PageError(
            422,
            "Say why",
            "A rejection or a request for changes needs a comment saying what to change.",
        )
    done = decide(
        session.principal,
        run_id,
        artifact_kind,
        version,
        decision=verdict,
        role=role or None,
        comment=comment.strip() or None,
        key=key,
    )
    notice = f"{artifact_kind.value} v{version} {done.decision}: {done.fate}" + (
        f" ({done.reason})" if done.reason else ""
    )
    return see_other(f"/console/runs/{run_id}?notice={quote(notice)}")


Text = Annotated[str, Form(max_length=2000)]


@router.post("/runs/{run_id}/artifacts/{kind}/amend", name="console_amend")
def amend(
    session: Posted,
    run_id: uuid.UUID,
    kind: str,
    artifact_id: Annotated[uuid.UUID, Form()],
    key: Annotated[str, Form(min_length=8, max_length=64)],
    row: Annotated[str, Form(min_length=1, max_length=200)],
    reason: Text = "",
    assessed_status: Annotated[str, Form(max_length=32)] = "",
    applicable: Annotated[str, Form(max_length=8)] = "",
    justification: Text = "",
    owner: Text = "",
    target_date: Annotated[str, Form(max_length=10)] = "",
    note: Text = "",
) -> Response:
    """One row of a draft changed by a reviewer: the draft's next version, which the
    approval then binds to (the same service as the API's amendments)."""
    need(session, Scope.APPROVE)
    artifact_kind = _kind(kind)
    # The SoA names the status a reviewer sets per requirement its implementation status.
    status = "implementation_status" if artifact_kind is ArtifactKind.SOA else "assessed_status"
    fields: dict[str, Any] = {
        status: assessed_status,
        "justification": justification,
        "owner": owner,
        "target_date": target_date,
        "note": note,
    }
    changes = {name: value.strip() for name, value in fields.items() if value.strip()}
    if applicable in ("yes", "no"):
        changes["applicable"] = applicable == "yes"
    if not changes:
        raise PageError(422, "Nothing to change", "Change at least one field of the row.")
    done = amend_artifact(
        session.principal.actor,
        run_id,
        artifact_id,
        [{"row": row, "changes": changes}],
        reason=reason,
        idempotency_key=f"console:{key}",
    )
    notice = f"{artifact_kind.value} v{done.version} drafted from v{done.based_on}: row {row}"
    return see_other(
        f"/console/runs/{run_id}/artifacts/{artifact_kind.value}?version={done.version}"
        f"&notice={quote(notice)}"
    )
