"""Columns the tables of granted roles share (`role_grants`, `oidc_group_roles` and their
append-only `..._events`): who granted the row that holds now, and what each change did,
who made it, why and when. Declared last in each table, after its own columns."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column


class Granted:
    """A grant that holds now: who granted it, and when."""

    granted_by: Mapped[str] = mapped_column(String(256))
    granted_at: Mapped[datetime]


class GrantChange:
    """One grant or revocation of it, kept for the audit trail."""

    action: Mapped[str] = mapped_column(String(16))
    actor_id: Mapped[str] = mapped_column(String(256))
    reason: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
