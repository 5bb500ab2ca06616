"""The identity provider's groups mapped to roles over HTTP: an admin of a tenant maps,
unmaps and lists them. A person who signs in to the console with the provider holds the
roles, and the scopes, their groups map to; every change is audited
(`GET /oidc/group-roles/history`), as role grants are."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.auth import Admin
from orchestrator.api.dependencies import IdempotencyHeader
from orchestrator.api.field_kinds import AuditReason, GrantedRole
from orchestrator.api.idempotency import StoredResponse, run_post_once
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.text import NOT_BLANK, Text
from orchestrator.service import oidc_access
from orchestrator.service.apikeys import Scope
from orchestrator.service.oidc_access import GroupRoleChange, GroupRoleEventView, GroupRoleView

router = APIRouter(
    prefix="/api/v1/oidc/group-roles",
    tags=["roles"],
    responses=problem_responses(400, 401, 403, 404, 422),
)

_Group = Annotated[
    Text,
    Field(
        min_length=1,
        max_length=256,
        pattern=NOT_BLANK,
        examples=["grc-approvers"],
        description="A group as the identity provider names it in the ID token.",
    ),
]
_Role = Annotated[GrantedRole, Field(examples=["approver"])]


class GroupRoleMapping(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group: _Group
    role: _Role
    scopes: list[Scope] = Field(
        default=[Scope.READ],
        min_length=1,
        max_length=5,
        description="What the group's members may do in the console (the scopes of an API key).",
    )
    reason: AuditReason = None


class GroupRoleUnmapping(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group: _Group
    role: _Role
    reason: AuditReason = None


@router.get("", response_model=list[GroupRoleView], summary="Groups mapped to roles")
def list_group_roles(principal: Admin) -> list[GroupRoleView]:
    return oidc_access.list_group_roles(principal.tenant_id)


@router.get(
    "/history",
    response_model=list[GroupRoleEventView],
    summary="Mappings and unmappings, newest first",
)
def group_role_history(
    principal: Admin, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> list[GroupRoleEventView]:
    return oidc_access.group_role_history(principal.tenant_id, limit=limit)


@router.post(
    "/map",
    response_model=GroupRoleChange,
    status_code=201,
    responses={
        200: {"model": GroupRoleChange, "description": "Already mapped so"},
        **problem_responses(409, 413),
    },
    summary="Map an identity provider's group to a role and scopes",
    description="201 when mapped (or its scopes changed), 200 when it was already so. "
    "Members hold the role and scopes from their next console request.",
)
def map_group_role(
    body: GroupRoleMapping,
    request: Request,
    principal: Admin,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    def action() -> StoredResponse:
        change = oidc_access.map_group(
            principal.tenant_id,
            body.group,
            body.role,
            [s.value for s in body.scopes],
            actor_id=principal.principal,
            reason=body.reason,
        )
        return StoredResponse(201 if change.changed else 200, change.model_dump(mode="json"), {})

    return run_post_once(principal, request, body, idempotency_key, action)


@router.post(
    "/unmap",
    response_model=GroupRoleChange,
    status_code=200,
    responses=problem_responses(409, 413),
    summary="Unmap a group from a role",
    description="At once: members lose the role, and their console sessions end when no "
    "other group of theirs is mapped. 404 when the group is not mapped to the role.",
)
def unmap_group_role(
    body: GroupRoleUnmapping,
    request: Request,
    principal: Admin,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    def action() -> StoredResponse:
        change = oidc_access.unmap_group(
            principal.tenant_id,
            body.group,
            body.role,
            actor_id=principal.principal,
            reason=body.reason,
        )
        return StoredResponse(200, change.model_dump(mode="json"), {})

    return run_post_once(principal, request, body, idempotency_key, action)
