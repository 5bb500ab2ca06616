"""Tables of approver roles: the roles each principal holds now, and every change to them.

A role is granted to a principal of one tenant (the principal an API key names, or a
Python caller's actor id). `role_grants` is the current state, one row per held role;
`role_grant_events` is append-only: who granted or revoked what, when and why.
"""

from __future__ import annotations

import uuid

from sqlalchemy import Index, String, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.contracts.ids import new_id
from orchestrator.db.grant_columns import GrantChange, Granted
from orchestrator.db.models import Base, BigId


class RoleGrant(Granted, Base):
    """A role one principal of one tenant holds."""

    __tablename__ = "role_grants"
    __table_args__ = (UniqueConstraint("tenant_id", "principal", "role", name="uq_role_grant"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128))
    principal: Mapped[str] = mapped_column(String(256))
    role: Mapped[str] = mapped_column(String(64))


class RoleGrantEvent(GrantChange, Base):
    """One grant or revocation, kept for the audit trail."""

    __tablename__ = "role_grant_events"
    __table_args__ = (Index("ix_role_grant_events_principal", "tenant_id", "principal", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    principal: Mapped[str] = mapped_column(String(256))
    role: Mapped[str] = mapped_column(String(64))
