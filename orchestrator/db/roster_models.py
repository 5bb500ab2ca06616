"""Tables of an assessment's roster: the people who own, approve and run its controls, and
every change to it.

`roster_people` is the roster now, one row per person; `roster_events` is append-only:
who added, changed or removed whom, when, with the person's fields after the change.
Drafts propose owners from the roster (workers.analysis.owner_proposal).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.contracts.ids import new_id
from orchestrator.db.models import Base, BigId, JsonDoc


class RosterPerson(Base):
    """One person on one assessment's roster."""

    __tablename__ = "roster_people"
    __table_args__ = (Index("ix_roster_people_assessment", "assessment_id", "added_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128))
    assessment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("assessments.id"))
    name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str | None] = mapped_column(String(320))
    principal: Mapped[str | None] = mapped_column(String(256))
    telephone: Mapped[str | None] = mapped_column(String(40))
    """Where to call them (FedRAMP's plan asks for its assessment lead's)."""
    roles: Mapped[list[str]] = mapped_column(JsonDoc)
    """What they are on this assessment: owner, approver, control_owner, isso, and
    FedRAMP's plan roles (orchestrator.contracts.fedramp_roles)."""
    title: Mapped[str | None] = mapped_column(String(200))
    """Their job title ("CISO"): matched against the role that usually runs a domain."""
    domains: Mapped[list[str]] = mapped_column(JsonDoc)
    """The SCF domains (IAC, HRS, ...) whose controls they own."""
    added_by: Mapped[str] = mapped_column(String(256))
    added_at: Mapped[datetime]


class RosterEvent(Base):
    """One addition, change or removal, kept for the audit trail."""

    __tablename__ = "roster_events"
    __table_args__ = (Index("ix_roster_events_assessment", "assessment_id", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    assessment_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    person_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    action: Mapped[str] = mapped_column(String(16))
    actor_id: Mapped[str] = mapped_column(String(256))
    reason: Mapped[str | None] = mapped_column(Text)
    person: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    """The person's fields after the change (before it, for a removal)."""
    created_at: Mapped[datetime]
