"""The identity provider's groups an admin maps to roles and scopes for the tenant: who
may sign in to the console with the provider, and what they may do there."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse

from orchestrator.console.web import ConsoleRoute, Posted, Session, need, render, see_other
from orchestrator.service.apikeys import Scope
from orchestrator.service.oidc_access import (
    group_role_history,
    list_group_roles,
    map_group,
    unmap_group,
)

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

_PAGE = "/console/settings/sign-in-groups"


@router.get("/settings/sign-in-groups", name="console_sign_in_groups")
def groups(request: Request, session: Session, notice: str | None = None) -> HTMLResponse:
    need(session, Scope.ADMIN)
    tenant = session.principal.tenant_id
    return render(
        request,
        session,
        "sign_in_groups.html",
        mapped=list_group_roles(tenant),
        history=group_role_history(tenant, limit=50),
        scopes=list(Scope),
        notice=notice,
    )


@router.post("/settings/sign-in-groups/map", name="console_sign_in_group_map")
def map_one(
    session: Posted,
    group: Annotated[str, Form(max_length=256)] = "",
    role: Annotated[str, Form(max_length=64)] = "",
    scope: Annotated[list[str] | None, Form(max_length=16)] = None,
    reason: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    need(session, Scope.ADMIN)
    change = map_group(
        session.principal.tenant_id,
        group,
        role,
        scope or [],
        actor_id=session.principal.principal,
        reason=reason,
    )
    said = "mapped" if change.changed else "already mapped"
    granted = ", ".join(s.value for s in change.scopes)
    notice = f"{change.group} {said} to {change.role} ({granted})"
    return see_other(f"{_PAGE}?notice={quote(notice)}")


@router.post("/settings/sign-in-groups/unmap", name="console_sign_in_group_unmap")
def unmap_one(
    session: Posted,
    group: Annotated[str, Form(max_length=256)] = "",
    role: Annotated[str, Form(max_length=64)] = "",
    reason: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    need(session, Scope.ADMIN)
    change = unmap_group(
        session.principal.tenant_id,
        group,
        role,
        actor_id=session.principal.principal,
        reason=reason,
    )
    notice = f"{change.group} no longer maps to {change.role}"
    return see_other(f"{_PAGE}?notice={quote(notice)}")
