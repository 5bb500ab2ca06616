"""What a person signed in with the OIDC identity provider may do: their groups, mapped by
an admin to roles and scopes per tenant.

An admin maps a group to a role and the scopes it gives (CLI, HTTP with the admin scope, or
these functions); every change is an append-only `oidc_group_role_events` row, as role grants
are. Signing in records the person's groups (`record_sign_in`); each console request then
reads what those groups map to now (`principal_of_identity`), so unmapping a group takes
their access away at once, and a person whose groups map to nothing gets no session.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import StoredTime, utcnow
from orchestrator.contracts.errors import InvalidInput, NotFound
from orchestrator.contracts.ids import new_id
from orchestrator.db.busy import retry_busy
from orchestrator.db.oidc_models import OidcGroupRole, OidcGroupRoleEvent, OidcIdentity
from orchestrator.db.session import read_transaction, transaction
from orchestrator.service.apikeys import Principal, Scope
from orchestrator.service.roles import RoleAction, check_role

#: What a person's key id reads as: they hold no API key (no run authority to revoke).
NO_KEY = ""
#: At most this many groups of one person are kept (a provider may list hundreds).
MAX_GROUPS = 200


class GroupRoleView(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant_id: str
    group: str
    role: str
    scopes: list[Scope]
    granted_by: str
    granted_at: StoredTime


class GroupRoleChange(BaseModel):
    """What one map or unmap command did; `changed` is false when it was already so."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    group: str
    role: str
    scopes: list[Scope]
    action: RoleAction
    changed: bool


class GroupRoleEventView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    tenant_id: str
    group: str
    role: str
    scopes: list[Scope]
    action: RoleAction
    actor_id: str
    reason: str | None
    created_at: StoredTime


def _group(tenant_id: str, group: str) -> tuple[str, str]:
    tenant_id, group = tenant_id.strip(), group.strip()
    if not tenant_id or len(tenant_id) > 128:
        raise InvalidInput("a group is mapped in a tenant id of 1 to 128 characters")
    if not group or len(group) > 256:
        raise InvalidInput("a group's name has 1 to 256 characters")
    return tenant_id, group


def _scopes(scopes: Iterable[str]) -> list[Scope]:
    chosen: set[Scope] = set()
    for scope in scopes:
        try:
            chosen.add(Scope(scope.strip()))
        except ValueError:
            known = ", ".join(s.value for s in Scope)
            raise InvalidInput(f"unknown scope {scope!r}; known: {known}") from None
    if not chosen:
        raise InvalidInput("a mapped group needs at least one scope (read, to see anything)")
    return sorted(chosen)


@retry_busy
def map_group(
    tenant_id: str,
    group: str,
    role: str,
    scopes: Iterable[str],
    *,
    actor_id: str,
    reason: str | None = None,
) -> GroupRoleChange:
    """Members of `group` hold `role` with `scopes`; mapping again with other scopes
    replaces them (recorded), the same scopes change nothing."""
    tenant_id, group = _group(tenant_id, group)
    role, chosen = check_role(role), _scopes(scopes)
    with transaction() as session:
        row = session.scalar(
            select(OidcGroupRole).where(
                OidcGroupRole.tenant_id == tenant_id,
                OidcGroupRole.group_name == group,
                OidcGroupRole.role == role,
            )
        )
        changed = row is None or sorted(row.scopes) != [s.value for s in chosen]
        if changed:
            try:
                with session.begin_nested():
                    if row is None:
                        session.add(
                            OidcGroupRole(
                                id=new_id(),
                                tenant_id=tenant_id,
                                group_name=group,
                                role=role,
                                scopes=[s.value for s in chosen],
                                granted_by=actor_id[:256],
                                granted_at=utcnow(),
                            )
                        )
                    else:
                        row.scopes = [s.value for s in chosen]
                        row.granted_by, row.granted_at = actor_id[:256], utcnow()
                    _record(
                        session,
                        tenant_id,
                        group,
                        role,
                        chosen,
                        RoleAction.GRANTED,
                        actor_id,
                        reason,
                    )
                    session.flush()
            except IntegrityError:  # a concurrent mapping of the same group and role won
                changed = False
        return GroupRoleChange(
            tenant_id=tenant_id,
            group=group,
            role=role,
            scopes=chosen,
            action=RoleAction.GRANTED,
            changed=changed,
        )


@retry_busy
def unmap_group(
    tenant_id: str, group: str, role: str, *, actor_id: str, reason: str | None = None
) -> GroupRoleChange:
    """At once: the group's members lose the role, and their sessions end if nothing else
    of theirs is mapped."""
    tenant_id, group = _group(tenant_id, group)
    role = role.strip()
    with transaction() as session:
        removed = session.scalars(
            delete(OidcGroupRole)
            .where(
                OidcGroupRole.tenant_id == tenant_id,
                OidcGroupRole.group_name == group,
                OidcGroupRole.role == role,
            )
            .returning(OidcGroupRole.scopes)
        ).all()
        if not removed:
            raise NotFound(f"the group {group!r} is not mapped to {role!r} in tenant {tenant_id}")
        scopes = sorted(Scope(s) for s in removed[0])
        _record(session, tenant_id, group, role, scopes, RoleAction.REVOKED, actor_id, reason)
        return GroupRoleChange(
            tenant_id=tenant_id,
            group=group,
            role=role,
            scopes=scopes,
            action=RoleAction.REVOKED,
            changed=True,
        )


def _record(
    session: Session,
    tenant_id: str,
    group: str,
    role: str,
    scopes: list[Scope],
    action: RoleAction,
    actor_id: str,
    reason: str | None,
) -> None:
    session.add(
        OidcGroupRoleEvent(
            tenant_id=tenant_id,
            group_name=group,
            role=role,
            scopes=[s.value for s in scopes],
            action=action.value,
            actor_id=actor_id[:256],
            reason=(reason or "").strip()[:2000] or None,
            created_at=utcnow(),
        )
    )


@retry_busy
def list_group_roles(tenant_id: str) -> list[GroupRoleView]:
    with read_transaction() as session:
        rows = session.scalars(
            select(OidcGroupRole)
            .where(OidcGroupRole.tenant_id == tenant_id)
            .order_by(OidcGroupRole.group_name, OidcGroupRole.role)
        )
        return [
            GroupRoleView(
                tenant_id=row.tenant_id,
                group=row.group_name,
                role=row.role,
                scopes=sorted(Scope(s) for s in row.scopes),
                granted_by=row.granted_by,
                granted_at=row.granted_at,
            )
            for row in rows
        ]


@retry_busy
def group_role_history(tenant_id: str, limit: int = 100) -> list[GroupRoleEventView]:
    """Mappings and unmappings, newest first."""
    with read_transaction() as session:
        rows = session.scalars(
            select(OidcGroupRoleEvent)
            .where(OidcGroupRoleEvent.tenant_id == tenant_id)
            .order_by(OidcGroupRoleEvent.id.desc())
            .limit(limit)
        )
        return [
            GroupRoleEventView(
                id=row.id,
                tenant_id=row.tenant_id,
                group=row.group_name,
                role=row.role,
                scopes=sorted(Scope(s) for s in row.scopes),
                action=RoleAction(row.action),
                actor_id=row.actor_id,
                reason=row.reason,
                created_at=row.created_at,
            )
            for row in rows
        ]


def _mapped(session: Session, tenant_id: str, groups: list[str]) -> list[OidcGroupRole]:
    if not groups:
        return []
    return list(
        session.scalars(
            select(OidcGroupRole).where(
                OidcGroupRole.tenant_id == tenant_id, OidcGroupRole.group_name.in_(groups)
            )
        )
    )


def group_access(session: Session, tenant_id: str) -> list[tuple[str, list[str], list[str]]]:
    """Each person of the tenant who signed in with the provider and whose groups map to
    something now: their principal, scopes and roles (inside a transaction)."""
    mapping: dict[str, list[OidcGroupRole]] = {}
    for row in session.scalars(select(OidcGroupRole).where(OidcGroupRole.tenant_id == tenant_id)):
        mapping.setdefault(row.group_name, []).append(row)
    found = []
    for identity in session.scalars(
        select(OidcIdentity).where(OidcIdentity.tenant_id == tenant_id)
    ):
        rows = [row for group in identity.groups for row in mapping.get(group, [])]
        if rows:
            scopes = sorted({s for row in rows for s in row.scopes})
            found.append((identity.principal, scopes, sorted({row.role for row in rows})))
    return found


def _principal(session: Session, identity: OidcIdentity) -> Principal | None:
    rows = _mapped(session, identity.tenant_id, list(identity.groups))
    if not rows:
        return None
    return Principal(
        key_id=NO_KEY,
        tenant_id=identity.tenant_id,
        principal=identity.principal,
        scopes=frozenset(Scope(s) for row in rows for s in row.scopes),
        organizations=None,
    )


def principal_name(issuer_host: str, subject: str) -> str:
    """Who a person of the provider is here: stable while their e-mail may change."""
    return f"oidc:{issuer_host}:{subject}"[:256]


@retry_busy
def record_sign_in(
    *,
    tenant_id: str,
    issuer: str,
    issuer_host: str,
    subject: str,
    email: str | None,
    groups: Iterable[str],
) -> tuple[str, Principal | None]:
    """Keep the groups the person signed in with; their principal name, and what their
    groups let them do now (None: nothing is mapped for any of them)."""
    name = principal_name(issuer_host, subject)
    kept = sorted({g.strip()[:256] for g in groups if g.strip()})[:MAX_GROUPS]
    with transaction() as session:
        identity = session.get(OidcIdentity, name)
        if identity is None:
            identity = OidcIdentity(principal=name, issuer=issuer[:512], subject=subject[:256])
            session.add(identity)
        identity.tenant_id, identity.groups = tenant_id, kept
        identity.email = (email or "")[:320] or None
        identity.signed_in_at = utcnow()
        session.flush()
        return name, _principal(session, identity)


def principal_of_identity(principal: str) -> Principal | None:
    """What a signed-in person may do now; None once none of their groups is mapped."""
    with read_transaction() as session:
        identity = session.get(OidcIdentity, principal)
        return None if identity is None else _principal(session, identity)
