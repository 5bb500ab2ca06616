"""Handoffs in the console: the tenant's effects outside the database that wait for a
person (read scope), claimed and resolved by an operator (operate scope)."""

from __future__ import annotations

import uuid
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse

from orchestrator.console.web import ConsoleRoute, Posted, Session, need, render, see_other
from orchestrator.service.apikeys import Scope
from orchestrator.service.handoffs import claim_handoff, list_handoffs, resolve_handoff

router = APIRouter(prefix="/console/handoffs", route_class=ConsoleRoute, include_in_schema=False)
Text = Annotated[str, Form(max_length=2000)]


@router.get("", name="console_handoffs")
def handoffs(
    request: Request, session: Session, show: str = "open", notice: str | None = None
) -> HTMLResponse:
    need(session, Scope.READ)
    listed = list_handoffs(session.principal.actor, status=None if show == "all" else "open")
    return render(request, session, "handoffs.html", handoffs=listed, show=show, notice=notice)


@router.post("/{handoff_id}/claim", name="console_handoff_claim")
def claim(session: Posted, handoff_id: uuid.UUID) -> Response:
    need(session, Scope.OPERATE)
    held = claim_handoff(session.principal.actor, handoff_id)
    notice = f"handoff claimed until {held.claimed_until:%H:%M} (fence {held.fence})"
    return see_other(f"/console/handoffs?notice={quote(notice)}#handoff-{handoff_id}")


@router.post("/{handoff_id}/resolve", name="console_handoff_resolve")
def resolve(
    session: Posted,
    handoff_id: uuid.UUID,
    action: Annotated[str, Form(max_length=32)],
    evidence_ref: Text = "",
    comment: Text = "",
    fence: Annotated[str, Form(max_length=12)] = "",
) -> Response:
    need(session, Scope.OPERATE)
    done = resolve_handoff(
        session.principal.actor,
        handoff_id,
        action,
        evidence_ref=evidence_ref,
        comment=comment,
        fence=int(fence) if fence.isdigit() else None,
    )
    notice = f"handoff resolved: {done.action}"
    return see_other(f"/console/runs/{done.run_id}?notice={quote(notice)}#handoffs")
