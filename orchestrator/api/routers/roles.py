"""Approver roles over HTTP: an admin of a tenant grants, revokes and lists its roles.

Every change is audited (`GET /roles/history`). Any key may ask which roles its own
principal holds (`GET /roles/me`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.auth import Admin, Caller
from orchestrator.api.dependencies import IdempotencyHeader
from orchestrator.api.field_kinds import AuditReason, GrantedRole
from orchestrator.api.idempotency import StoredResponse, run_post_once
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.text import NOT_BLANK, Text
from orchestrator.service import roles
from orchestrator.service.roles import RoleChange, RoleEventView, RoleGrantView

router = APIRouter(
    prefix="/api/v1/roles", tags=["roles"], responses=problem_responses(400, 401, 403, 404, 422)
)


class RoleRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    principal: Text = Field(
        min_length=1,
        max_length=256,
        pattern=NOT_BLANK,
        description="Who holds the role: the principal an API key names.",
    )
    role: Annotated[GrantedRole, Field(examples=["assessor"])]
    reason: AuditReason = None


class MyRoles(BaseModel):
    tenant_id: str
    principal: str
    roles: list[str]


PrincipalFilter = Annotated[
    Text | None, Query(alias="principal", max_length=256, description="Only this principal's.")
]


@router.get("", response_model=list[RoleGrantView], summary="Roles granted in this tenant")
def index(principal: Admin, of: PrincipalFilter = None) -> list[RoleGrantView]:
    return roles.list_grants(principal.tenant_id, of)


@router.get("/me", response_model=MyRoles, summary="The roles this key's principal holds")
def mine(principal: Caller) -> MyRoles:
    return MyRoles(
        tenant_id=principal.tenant_id,
        principal=principal.principal,
        roles=roles.roles_of(principal.tenant_id, principal.principal),
    )


@router.get(
    "/history", response_model=list[RoleEventView], summary="Grants and revocations, newest first"
)
def history(
    principal: Admin, of: PrincipalFilter = None, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> list[RoleEventView]:
    return roles.role_history(principal.tenant_id, of, limit=limit)


@router.post(
    "/grant",
    response_model=RoleChange,
    status_code=201,
    responses={
        200: {"model": RoleChange, "description": "Already held"},
        **problem_responses(409, 413),
    },
    summary="Grant a role to a principal",
    description="201 when granted, 200 when the principal already held it.",
)
def grant(
    body: RoleRequest, request: Request, principal: Admin, idempotency_key: IdempotencyHeader = None
) -> JSONResponse:
    def action() -> StoredResponse:
        change = roles.grant_role(
            principal.tenant_id,
            body.principal,
            body.role,
            actor_id=principal.principal,
            reason=body.reason,
        )
        return StoredResponse(201 if change.changed else 200, change.model_dump(mode="json"), {})

    return run_post_once(principal, request, body, idempotency_key, action)


@router.post(
    "/revoke",
    response_model=RoleChange,
    status_code=200,
    responses=problem_responses(409, 413),
    summary="Revoke a role from a principal",
    description="At once: approval events recorded from now on no longer carry it. "
    "404 when the principal does not hold it.",
)
def revoke(
    body: RoleRequest, request: Request, principal: Admin, idempotency_key: IdempotencyHeader = None
) -> JSONResponse:
    def action() -> StoredResponse:
        change = roles.revoke_role(
            principal.tenant_id,
            body.principal,
            body.role,
            actor_id=principal.principal,
            reason=body.reason,
        )
        return StoredResponse(200, change.model_dump(mode="json"), {})

    return run_post_once(principal, request, body, idempotency_key, action)
