"""Tables of the HTTP API: API keys (stored hashed) and replayable idempotent responses."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, String, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.db.models import Base, JsonDoc


class ApiKey(Base):
    """A caller's key: one tenant, optionally some organizations, a set of scopes.

    Only the SHA-256 of the secret is stored; the key itself is shown once at creation.
    """

    __tablename__ = "api_keys"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    key_id: Mapped[str] = mapped_column(String(32), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    tenant_id: Mapped[str] = mapped_column(String(128), index=True)
    principal: Mapped[str] = mapped_column(String(256))
    organizations: Mapped[list[str] | None] = mapped_column(JsonDoc, nullable=True)
    scopes: Mapped[list[str]] = mapped_column(JsonDoc)
    name: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class IdempotentResponse(Base):
    """The response a POST gave under an Idempotency-Key, replayed for the same request.

    `status_code` is NULL while the first request is still being handled.
    """

    __tablename__ = "idempotent_responses"
    __table_args__ = (
        UniqueConstraint("tenant_id", "idempotency_key", name="uq_idempotent_response_key"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    tenant_id: Mapped[str] = mapped_column(String(128))
    idempotency_key: Mapped[str] = mapped_column(String(256))
    request_hash: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    response_body: Mapped[dict[str, Any] | None]
    response_headers: Mapped[dict[str, Any] | None]
    created_at: Mapped[datetime]
    completed_at: Mapped[datetime | None]


class EndedConsoleSession(Base):
    """A console session signed out before its cookie expires: the cookie no longer
    signs anyone in. Kept until the cookie's own expiry, then of no use."""

    __tablename__ = "ended_console_sessions"

    session_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    ended_at: Mapped[datetime]
    expires_at: Mapped[datetime] = mapped_column(index=True)
