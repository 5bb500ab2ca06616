"""Gate settings an admin keeps for the tenant: whether a reviewer who amended a draft may
approve it at that gate (separation of duties otherwise sends it to another reviewer)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse

from orchestrator.console.web import (
    ConsoleRoute,
    PageError,
    Posted,
    Session,
    need,
    render,
    see_other,
)
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.service.apikeys import Scope
from orchestrator.service.gate_settings import gate_settings, set_gate_setting

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)


@router.get("/settings/gates", name="console_gate_settings")
def settings(request: Request, session: Session, notice: str | None = None) -> HTMLResponse:
    need(session, Scope.ADMIN)
    return render(
        request,
        session,
        "gate_settings.html",
        gates=gate_settings(session.principal.tenant_id),
        notice=notice,
    )


@router.post("/settings/gates/{kind}", name="console_gate_setting")
def change(
    session: Posted,
    kind: str,
    amender_may_approve: Annotated[str, Form(max_length=8)] = "",
    reason: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    need(session, Scope.ADMIN)
    try:
        gate = ArtifactKind(kind)
    except ValueError as error:
        raise PageError(404, "Not found", f"There is no gate {kind!r}.") from error
    if amender_may_approve not in ("yes", "no"):
        raise PageError(422, "Choose", "Choose whether an amender may approve this gate.")
    changed = set_gate_setting(
        session.principal.actor,
        gate,
        amender_may_approve=amender_may_approve == "yes",
        reason=reason,
    )
    said = "may" if changed.amender_may_approve else "may not"
    notice = f"{gate.value.replace('_', ' ')}: whoever amended a draft {said} approve it"
    return see_other(f"/console/settings/gates?notice={quote(notice)}")
