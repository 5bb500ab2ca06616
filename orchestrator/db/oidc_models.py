"""Tables of the console's sign-in with an OIDC identity provider.

An admin maps a group of the provider to a role and the scopes it gives, per tenant
(`oidc_group_roles`, the current state; `oidc_group_role_events`, append-only: who mapped or
unmapped what, when and why). `oidc_identities` keeps the groups each person signed in with,
so the roles and scopes their groups map to are read from the mapping as it is now.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Index, String, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.contracts.ids import new_id
from orchestrator.db.grant_columns import GrantChange, Granted
from orchestrator.db.models import Base, BigId, JsonDoc


class OidcGroupRole(Granted, Base):
    """Members of a provider's group hold this role, with these scopes, in this tenant."""

    __tablename__ = "oidc_group_roles"
    __table_args__ = (
        UniqueConstraint("tenant_id", "group_name", "role", name="uq_oidc_group_role"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128))
    group_name: Mapped[str] = mapped_column(String(256))
    role: Mapped[str] = mapped_column(String(64))
    scopes: Mapped[list[str]] = mapped_column(JsonDoc)


class OidcGroupRoleEvent(GrantChange, Base):
    """One mapping or unmapping, kept for the audit trail."""

    __tablename__ = "oidc_group_role_events"
    __table_args__ = (Index("ix_oidc_group_role_events_group", "tenant_id", "group_name", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    group_name: Mapped[str] = mapped_column(String(256))
    role: Mapped[str] = mapped_column(String(64))
    scopes: Mapped[list[str]] = mapped_column(JsonDoc)


class OidcIdentity(Base):
    """A person as the provider last described them when they signed in."""

    __tablename__ = "oidc_identities"

    principal: Mapped[str] = mapped_column(String(256), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    issuer: Mapped[str] = mapped_column(String(512))
    subject: Mapped[str] = mapped_column(String(256))
    email: Mapped[str | None] = mapped_column(String(320))
    groups: Mapped[list[str]] = mapped_column(JsonDoc)
    signed_in_at: Mapped[datetime]
