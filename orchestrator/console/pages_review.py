"""Reviewing a draft: its tables page by page, what changed since the previous version,
pictures, the report inline, a row's own page, and the work done from them: amend rows
(one, those ticked, or every row a filter selects), comment, claim the review, decide."""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Form, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, HTMLResponse

from orchestrator.config.settings import get_settings
from orchestrator.console.amend_fields import changes_of, fields_of
from orchestrator.console.decisions import decide
from orchestrator.console.draft_tables import (
    TableSpec,
    named_rows,
    spec_of,
    specs_of,
    with_decisions,
)
from orchestrator.console.review_page import choose, content_of, load_review
from orchestrator.console.web import (
    ConsoleRoute,
    PageError,
    Posted,
    Session,
    action_key,
    need,
    reads_once,
    render,
    see_other,
)
from orchestrator.contracts.errors import GateNotReady, InvalidInput, NotFound
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.lifecycle.approval_checks import ApprovalDecision
from orchestrator.service.amendments import amend_artifact
from orchestrator.service.apikeys import Scope
from orchestrator.service.draft_rows import rows_of
from orchestrator.service.queries import get_artifact, list_artifacts
from orchestrator.service.reassessments import approve_row
from orchestrator.service.review_claims import claim_review, release_review, take_over_review
from orchestrator.service.review_comments import add_comment, list_comments

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

Key = Annotated[str, Form(min_length=8, max_length=64)]
#: Changed rows a diff lists per table before it offers the rest on request.
CHANGES_SHOWN = 50
Text = Annotated[str, Form(max_length=4000)]


def _kind(value: str) -> ArtifactKind:
    try:
        return ArtifactKind(value)
    except ValueError as error:
        raise PageError(404, "Not found", f"There is no artifact kind {value!r}.") from error


def _review_url(run_id: uuid.UUID, kind: ArtifactKind, **params: Any) -> str:
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return f"/console/runs/{run_id}/artifacts/{kind.value}" + (f"?{query}" if query else "")


@router.get("/runs/{run_id}/artifacts/{kind}", name="console_review")
@reads_once
def review(
    request: Request,
    session: Session,
    run_id: uuid.UUID,
    kind: str,
    version: int | None = None,
    notice: str | None = None,
    problem: str | None = None,
) -> HTMLResponse:
    need(session, Scope.READ)
    artifact_kind = _kind(kind)
    params = {k: v for k, v in request.query_params.items() if k not in ("notice", "problem")}
    everything = params.get("changes") == "all"
    page = load_review(session.principal, run_id, artifact_kind, version, params)
    params["version"] = str(page.artifact.version)  # every link stays on the version read
    return render(
        request,
        session,
        "review.html",
        r=page,
        run=page.run,
        kind=artifact_kind,
        artifact=page.artifact,
        params=params,
        key=action_key(),
        amend_fields=fields_of(artifact_kind),
        shown_changes=100_000 if everything else CHANGES_SHOWN,
        notice=notice,
        problem=problem,
    )


@router.get("/runs/{run_id}/artifacts/{kind}/row", name="console_review_row")
@reads_once
def row_page(
    request: Request,
    session: Session,
    run_id: uuid.UUID,
    kind: str,
    name: str,
    table: str | None = None,
    version: int | None = None,
    notice: str | None = None,
) -> HTMLResponse:
    """One row on its own page: every field, its passages, its thread and its history."""
    need(session, Scope.READ)
    actor = session.principal.actor
    artifact_kind = _kind(kind)
    versions = list_artifacts(actor, run_id, artifact_kind.value)
    chosen = choose(versions, version, run_id, artifact_kind)
    content = content_of(actor, run_id, chosen)
    spec = spec_of(artifact_kind, table) if table else _decided_spec(artifact_kind)
    found = (
        next(
            (
                r
                for r in with_decisions(
                    artifact_kind, spec, content, named_rows(artifact_kind, spec, content)
                )
                if r.name == name
            ),
            None,
        )
        if spec is not None
        else None
    )
    if spec is None or found is None:
        raise NotFound(f"{artifact_kind.value} v{chosen.version} has no row {name!r}")
    latest = chosen.version == versions[-1].version and chosen.status == "draft"
    return render(
        request,
        session,
        "review_row.html",
        run_id=run_id,
        kind=artifact_kind,
        artifact=chosen,
        spec=spec,
        row=found,
        comments=[c for c in list_comments(actor, run_id, artifact_kind) if c.row == name],
        history=_row_history(content, name),
        amendable=spec.decided
        and latest
        and rows_of(artifact_kind) is not None
        and session.principal.allows(Scope.APPROVE),
        amend_fields=fields_of(artifact_kind),
        key=action_key(),
        notice=notice,
    )


def _decided_spec(kind: ArtifactKind) -> TableSpec | None:
    return next((s for s in specs_of(kind) if s.decided), None)


def _row_history(content: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """Each amendment of this row up to this version: who, when, why, before and after."""
    found = []
    for amendment in content.get("amendments") or []:
        for row in amendment.get("rows") or []:
            if isinstance(row, dict) and row.get("row") == name:
                found.append({**amendment, "before": row.get("before"), "after": row.get("after")})
    return found


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
    key: Key,
    decision: Annotated[str, Form(max_length=32)] = "",
    role: Annotated[str, Form(max_length=64)] = "",
    comment: Text = "",
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
    try:
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
    except GateNotReady as error:
        raise PageError(
            409,
            "Not ready to approve",
            f"{error.message}.",
            links=[
                ("Show the undecided rows", _undecided_url(run_id, artifact_kind, version)),
                ("Back to the draft", _review_url(run_id, artifact_kind, version=version)),
            ],
        ) from error
    release_review(session.principal.actor, run_id, artifact_kind)  # decided: claim done
    notice = f"{artifact_kind.value} v{version} {done.decision}: {done.fate}" + (
        f" ({done.reason})" if done.reason else ""
    )
    return see_other(f"/console/runs/{run_id}?notice={quote(notice)}")


def _undecided_url(run_id: uuid.UUID, kind: ArtifactKind, version: int) -> str:
    spec = _decided_spec(kind)
    extra = {f"{spec.slug}.undecided": "1"} if spec is not None else {}
    return _review_url(run_id, kind, version=version, **extra) + "#tables"


@router.post("/runs/{run_id}/artifacts/{kind}/amend", name="console_amend")
async def amend(request: Request, session: Posted, run_id: uuid.UUID, kind: str) -> Response:
    """Rows of a draft changed by a reviewer: one row, the rows ticked, or every row the
    table's filter selects; the draft's next version, which approvals then bind to (the
    same service as the API's amendments)."""
    need(session, Scope.APPROVE)
    artifact_kind = _kind(kind)
    form = await request.form()
    fields = {k: str(v) for k, v in form.items() if isinstance(v, str)}
    changes = changes_of(artifact_kind, fields)
    if not changes:
        raise PageError(422, "Nothing to change", "Change at least one field of the rows.")
    try:
        artifact_id = uuid.UUID(fields.get("artifact_id", ""))
    except ValueError as error:
        raise PageError(422, "Not accepted", "The form names no draft.") from error
    entry = _selection(form.getlist("rows"), fields)
    if entry.pop("every", False):  # no filter: every row of the version read
        entry["rows"] = await run_in_threadpool(
            _every_row, session.principal.actor, run_id, artifact_kind, artifact_id
        )
    key = fields.get("key", "")
    if not 8 <= len(key) <= 64:
        raise PageError(422, "Not accepted", "The form's key is missing; reload the page.")
    done = await run_in_threadpool(
        amend_artifact,
        session.principal.actor,
        run_id,
        artifact_id,
        [{**entry, "changes": changes}],
        reason=fields.get("reason", ""),
        idempotency_key=f"console:{key}",
    )
    what = (
        f"row {entry['row']}"
        if "row" in entry
        else f"{len(entry['rows'])} rows"
        if "rows" in entry
        else "every row matching the filter"
    )
    notice = f"{artifact_kind.value} v{done.version} drafted from v{done.based_on}: {what} amended"
    return see_other(_review_url(run_id, artifact_kind, version=done.version, notice=notice))


def _every_row(
    actor: Actor, run_id: uuid.UUID, kind: ArtifactKind, artifact_id: uuid.UUID
) -> list[str]:
    spec = _decided_spec(kind)
    content = get_artifact(actor, run_id, artifact_id).content
    return [r.name for r in named_rows(kind, spec, content)] if spec is not None else []


def _selection(ticked: list[Any], fields: dict[str, str]) -> dict[str, Any]:
    """Which rows the form names: `row` (a row's page), `filter` (every row the table's
    filter selects: the JSON the page carried) or the rows ticked."""
    target = fields.get("target", "ticked")
    if fields.get("row"):
        return {"row": fields["row"]}
    if target == "filter":
        try:
            wanted = json.loads(fields.get("filter") or "null")
        except ValueError as error:
            raise InvalidInput("the form's filter is not readable; reload the page") from error
        return {"filter": wanted} if wanted else {"every": True}
    names = [str(n) for n in ticked if str(n).strip()]
    if not names:
        raise PageError(
            422,
            "No rows chosen",
            "Tick the rows to amend, or choose every row matching the filter.",
        )
    return {"rows": names}


@router.post("/runs/{run_id}/artifacts/{kind}/comments", name="console_comment")
def comment(
    session: Posted,
    run_id: uuid.UUID,
    kind: str,
    version: Annotated[int, Form(ge=1)],
    body: Text = "",
    row: Annotated[str, Form(max_length=300)] = "",
    back: Annotated[str, Form()] = "",
) -> Response:
    need(session, Scope.APPROVE, Scope.SIGNAL)  # the people who review or answer drafts
    artifact_kind = _kind(kind)
    added = add_comment(
        session.principal.actor, run_id, artifact_kind, version, body, row=row or None
    )
    where = f"row {added.row}" if added.row else f"{artifact_kind.value} v{version}"
    return see_other(_back(back, run_id, artifact_kind, f"Comment added on {where}"))


def _back(back: str, run_id: uuid.UUID, kind: ArtifactKind, notice: str) -> str:
    """Where a form returns: the page it came from, when it is this run's console page."""
    own = f"/console/runs/{run_id}"
    target = back if back.startswith(own) and "//" not in back else _review_url(run_id, kind)
    target, _, anchor = target.partition("#")
    joiner = "&" if "?" in target else "?"
    return f"{target}{joiner}notice={quote(notice)}" + (f"#{anchor}" if anchor else "")


@router.post("/reassessments/{reassessment_id}/row-approvals", name="console_row_approval")
def row_approval(
    session: Posted,
    reassessment_id: uuid.UUID,
    row: Annotated[str, Form(min_length=1, max_length=300)],
    row_sha256: Annotated[str, Form(min_length=64, max_length=64)],
    comment: Text = "",
    back: Annotated[str, Form()] = "",
) -> Response:
    """Approve one changed row of a reassessed SoA, as the page showed it (its hash); the
    version is approved with its last changed row (the same service as the API's)."""
    need(session, Scope.APPROVE)
    done = approve_row(
        session.principal.actor,
        reassessment_id,
        row,
        row_sha256_seen=row_sha256,
        comment=comment.strip() or None,
    )
    left = sum(1 for c in done.changed_rows if c["approved_by"] is None)
    notice = f"Changed row {row} approved; " + (
        f"{left} changed row{'s' if left != 1 else ''} still to approve"
        if left
        else f"soa v{done.result_version} approved"
    )
    return see_other(_back(back, done.base_run_id, ArtifactKind.SOA, notice))


# Last: its path would take the other forms' (decision, amend, comments) otherwise.
def _claim(actor: Actor, run_id: uuid.UUID, kind: ArtifactKind) -> str:
    held = claim_review(actor, run_id, kind)
    return f"You claimed this review until {held.expires_at:%H:%M} UTC"


def _release(actor: Actor, run_id: uuid.UUID, kind: ArtifactKind) -> str:
    freed = release_review(actor, run_id, kind)
    return "You released this review" if freed else "You held no claim on this review"


def _take_over(actor: Actor, run_id: uuid.UUID, kind: ArtifactKind) -> str:
    held = take_over_review(actor, run_id, kind)
    return f"You took this review over until {held.expires_at:%H:%M} UTC; its holder is told"


_CLAIMS = {"claim": _claim, "release": _release, "take-over": _take_over}


@router.post("/runs/{run_id}/artifacts/{kind}/{command}", name="console_claim")
def claim(
    session: Posted,
    run_id: uuid.UUID,
    kind: str,
    command: str,
    back: Annotated[str, Form()] = "",
) -> Response:
    """Claim a gate's review (others see who is on it until it lapses), release it, or take
    over another person's."""
    need(session, Scope.APPROVE)
    act = _CLAIMS.get(command)
    if act is None:
        raise PageError(404, "Not found", f"There is no {command} command for a draft.")
    artifact_kind = _kind(kind)
    notice = act(session.principal.actor, run_id, artifact_kind)
    return see_other(_back(back, run_id, artifact_kind, notice))
