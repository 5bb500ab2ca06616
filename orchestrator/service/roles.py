"""Approver roles: granted to principals by an admin, never claimed by a request.

A principal is who acts for a tenant: the principal an API key names, or a Python
caller's actor id. An admin grants and revokes roles (CLI, HTTP with the admin scope, or
these functions); every change is an append-only `role_grant_events` row. A person signed
in with the identity provider also holds the roles an admin mapped their groups to
(`oidc_access`). Recording an approval event reads the roles its principal holds at that
moment (`held_roles`).
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import StoredTime, utcnow
from orchestrator.contracts.errors import InvalidInput, NotFound
from orchestrator.contracts.ids import new_id
from orchestrator.db.busy import retry_busy
from orchestrator.db.oidc_models import OidcGroupRole, OidcIdentity
from orchestrator.db.role_models import RoleGrant, RoleGrantEvent
from orchestrator.db.session import read_transaction, transaction

#: Lower-case words joined by `_`, `-` or `.`: a role policies can name without quoting.
ROLE_PATTERN = re.compile(r"[a-z][a-z0-9_.-]{0,63}")

#: How an admin grants a role, quoted by every refusal that names a missing one.
GRANT_HINT = (
    "an admin grants roles with `celery -A orchestrator lifecycle role grant` "
    "or POST /api/v1/roles/grant"
)


class RoleAction(StrEnum):
    GRANTED = "granted"
    REVOKED = "revoked"


class RoleGrantView(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant_id: str
    principal: str
    role: str
    granted_by: str
    granted_at: StoredTime


class RoleChange(BaseModel):
    """What one grant or revoke command did; `changed` is false when it was already so."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    principal: str
    role: str
    action: RoleAction
    changed: bool
    roles: list[str]
    """Every role the principal holds after the command."""


class RoleEventView(BaseModel):
    model_config = ConfigDict(frozen=True, from_attributes=True)

    id: int
    tenant_id: str
    principal: str
    role: str
    action: RoleAction
    actor_id: str
    reason: str | None
    created_at: StoredTime


def check_role(role: str) -> str:
    role = role.strip()
    if not ROLE_PATTERN.fullmatch(role):
        raise InvalidInput(
            f"role {role!r} is not a role name: 1 to 64 characters, lower-case "
            "letters, digits, '_', '-' or '.', starting with a letter"
        )
    return role


def _who(tenant_id: str, principal: str) -> tuple[str, str]:
    tenant_id, principal = tenant_id.strip(), principal.strip()
    if not tenant_id or len(tenant_id) > 128:
        raise InvalidInput("a role is granted in a tenant id of 1 to 128 characters")
    if not principal or len(principal) > 256:
        raise InvalidInput("a role is granted to a principal of 1 to 256 characters")
    return tenant_id, principal


def held_roles(session: Session, tenant_id: str, principal: str) -> list[str]:
    """The roles `principal` holds in `tenant_id` now, sorted (inside a transaction):
    granted to it, or, for a person signed in with the identity provider, mapped to a
    group they signed in with."""
    granted = set(
        session.scalars(
            select(RoleGrant.role).where(
                RoleGrant.tenant_id == tenant_id, RoleGrant.principal == principal
            )
        )
    )
    return sorted(granted | set(_group_roles(session, tenant_id, principal)))


def _group_roles(session: Session, tenant_id: str, principal: str) -> list[str]:
    identity = session.get(OidcIdentity, principal)
    if identity is None or identity.tenant_id != tenant_id or not identity.groups:
        return []
    return list(
        session.scalars(
            select(OidcGroupRole.role).where(
                OidcGroupRole.tenant_id == tenant_id,
                OidcGroupRole.group_name.in_(list(identity.groups)),
            )
        )
    )


@retry_busy
def roles_of(tenant_id: str, principal: str) -> list[str]:
    """Which roles does this principal hold? (for pages and listings)"""
    with read_transaction() as session:
        return held_roles(session, tenant_id, principal)


@retry_busy
def grant_role(
    tenant_id: str, principal: str, role: str, *, actor_id: str, reason: str | None = None
) -> RoleChange:
    """Grant `role`; granting a role already held changes nothing and records nothing."""
    tenant_id, principal = _who(tenant_id, principal)
    role = check_role(role)
    with transaction() as session:
        changed = False
        if role not in held_roles(session, tenant_id, principal):
            try:
                with session.begin_nested():
                    session.add(
                        RoleGrant(
                            id=new_id(),
                            tenant_id=tenant_id,
                            principal=principal,
                            role=role,
                            granted_by=actor_id[:256],
                            granted_at=utcnow(),
                        )
                    )
                    _record(
                        session, tenant_id, principal, role, RoleAction.GRANTED, actor_id, reason
                    )
                    session.flush()
                changed = True
            except IntegrityError:  # a concurrent grant of the same role won
                changed = False
        return RoleChange(
            tenant_id=tenant_id,
            principal=principal,
            role=role,
            action=RoleAction.GRANTED,
            changed=changed,
            roles=held_roles(session, tenant_id, principal),
        )


@retry_busy
def revoke_role(
    tenant_id: str, principal: str, role: str, *, actor_id: str, reason: str | None = None
) -> RoleChange:
    """Revoke `role` at once: events recorded from now on no longer carry it."""
    tenant_id, principal = _who(tenant_id, principal)
    role = role.strip()
    with transaction() as session:
        removed = session.scalars(
            delete(RoleGrant)
            .where(
                RoleGrant.tenant_id == tenant_id,
                RoleGrant.principal == principal,
                RoleGrant.role == role,
            )
            .returning(RoleGrant.id)
        ).all()
        if not removed:
            raise NotFound(f"{principal} does not hold the role {role!r} in tenant {tenant_id}")
        _record(session, tenant_id, principal, role, RoleAction.REVOKED, actor_id, reason)
        return RoleChange(
            tenant_id=tenant_id,
            principal=principal,
            role=role,
            action=RoleAction.REVOKED,
            changed=True,
            roles=held_roles(session, tenant_id, principal),
        )


def _record(
    session: Session,
    tenant_id: str,
    principal: str,
    role: str,
    action: RoleAction,
    actor_id: str,
    reason: str | None,
) -> None:
    session.add(
        RoleGrantEvent(
            tenant_id=tenant_id,
            principal=principal,
            role=role,
            action=action.value,
            actor_id=actor_id[:256],
            reason=(reason or "").strip()[:2000] or None,
            created_at=utcnow(),
        )
    )


@retry_busy
def list_grants(tenant_id: str | None = None, principal: str | None = None) -> list[RoleGrantView]:
    with read_transaction() as session:
        query = select(RoleGrant).order_by(RoleGrant.tenant_id, RoleGrant.principal, RoleGrant.role)
        if tenant_id is not None:
            query = query.where(RoleGrant.tenant_id == tenant_id)
        if principal is not None:
            query = query.where(RoleGrant.principal == principal)
        return [
            RoleGrantView(
                tenant_id=row.tenant_id,
                principal=row.principal,
                role=row.role,
                granted_by=row.granted_by,
                granted_at=row.granted_at,
            )
            for row in session.scalars(query)
        ]


@retry_busy
def role_history(
    tenant_id: str | None = None, principal: str | None = None, limit: int = 100
) -> list[RoleEventView]:
    """Grants and revocations, newest first."""
    with read_transaction() as session:
        query = select(RoleGrantEvent).order_by(RoleGrantEvent.id.desc()).limit(limit)
        if tenant_id is not None:
            query = query.where(RoleGrantEvent.tenant_id == tenant_id)
        if principal is not None:
            query = query.where(RoleGrantEvent.principal == principal)
        return [RoleEventView.model_validate(row) for row in session.scalars(query)]
