"""Proposal quality: the figures measured on the labelled corpora beside this tenant's own,
from its reviewers' decisions, with a warning where the tenant's fall below."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from orchestrator.console.web import ConsoleRoute, Session, render
from orchestrator.service.proposal_quality import ENOUGH, tenant_quality

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)


@router.get("/quality", name="console_quality")
def quality(request: Request, session: Session) -> HTMLResponse:
    view = tenant_quality(session.principal.actor)
    return render(request, session, "quality.html", view=view, enough=ENOUGH)
