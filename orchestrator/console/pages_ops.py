"""Operator pages (operate scope): runs by status and step, stuck runs, dead letters with
replay and resolve."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse

from orchestrator.console.sessions import ConsoleSession
from orchestrator.console.settings import get_console_settings
from orchestrator.console.web import (
    Confirm,
    ConsoleRoute,
    Posted,
    Session,
    confirmed,
    need,
    render,
    see_other,
)
from orchestrator.contracts.errors import NotFound
from orchestrator.service.apikeys import Scope
from orchestrator.service.dead_letters import (
    DeadLetterView,
    get_dead_letter,
    list_dead_letters,
    replay_dead_letter,
    resolve_dead_letter,
)
from orchestrator.service.producer import get_run
from orchestrator.service.stuck_runs import counts_by_status_and_step, stuck_runs

router = APIRouter(prefix="/console/ops", route_class=ConsoleRoute, include_in_schema=False)


@router.get("", name="console_ops")
def overview(request: Request, session: Session) -> HTMLResponse:
    need(session, Scope.OPERATE)
    return render(
        request, session, "ops.html", counts=counts_by_status_and_step(session.principal.actor)
    )


@router.get("/stuck", name="console_stuck")
def stuck(request: Request, session: Session) -> HTMLResponse:
    need(session, Scope.OPERATE)
    threshold = get_console_settings().stuck_after_s
    return render(
        request,
        session,
        "stuck.html",
        threshold_s=threshold,
        stuck=stuck_runs(session.principal.actor, threshold),
    )


@router.get("/dead-letters", name="console_dead_letters")
def dead_letters(
    request: Request, session: Session, show: str = "open", notice: str | None = None
) -> HTMLResponse:
    need(session, Scope.OPERATE)
    letters = list_dead_letters(
        tenant_id=session.principal.tenant_id, include_replayed=show == "all", limit=200
    )
    visible = [letter for letter in letters if _visible(session, letter)]
    return render(request, session, "dead_letters.html", letters=visible, show=show, notice=notice)


def _visible(session: ConsoleSession, letter: DeadLetterView) -> bool:
    return letter.tenant_id == session.principal.tenant_id


def _letter(session: ConsoleSession, letter_id: int) -> DeadLetterView:
    """Another tenant's dead letter does not exist for this person; nor does one of a run
    in an organization their key may not see."""
    letter = get_dead_letter(letter_id)
    if not _visible(session, letter):
        raise NotFound(f"dead letter {letter_id} not found")
    get_run(session.principal.actor, letter.run_id)
    return letter


def _confirmed_letter(session: ConsoleSession, letter_id: int, confirm: str) -> DeadLetterView:
    """The dead letter an operator acts on, once they ticked the confirmation box."""
    need(session, Scope.OPERATE)
    confirmed(confirm)
    return _letter(session, letter_id)


@router.post("/dead-letters/{letter_id}/replay", name="console_replay")
def replay(
    session: Posted,
    letter_id: int,
    reason: Annotated[str, Form(max_length=2000)] = "",
    confirm: Confirm = "",
) -> Response:
    letter = _confirmed_letter(session, letter_id, confirm)
    receipt = replay_dead_letter(letter.id, actor_id=session.principal.principal, reason=reason)
    notice = f"dead letter {letter.id} replayed: retry {receipt.fate.value}"
    return see_other(f"/console/runs/{letter.run_id}?notice={quote(notice)}")


@router.post("/dead-letters/{letter_id}/resolve", name="console_resolve")
def resolve(
    session: Posted,
    letter_id: int,
    reason: Annotated[str, Form(max_length=2000)] = "",
    confirm: Confirm = "",
) -> Response:
    letter = _confirmed_letter(session, letter_id, confirm)
    resolve_dead_letter(letter.id, actor_id=session.principal.principal, reason=reason)
    return see_other(
        f"/console/ops/dead-letters?notice={quote(f'dead letter {letter.id} resolved')}"
    )
