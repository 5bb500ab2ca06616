"""Tables of review work: who claimed a gate's review, what reviewers said about a draft,
and the gate settings an admin keeps per tenant. Migration 0011 creates them.

A claim is the current holder of one gate's review on one run (at most one: the primary
key); releasing it, or the sweep freeing it once lapsed, deletes the row, and the audit
trail keeps every claim, release and lapse. Comments are append-only and name the draft
version they were written on (and a row, or none for the draft as a whole).
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.db.models import Base, BigId


class ReviewClaim(Base):
    __tablename__ = "review_claims"
    __table_args__ = (Index("ix_review_claims_expiry", "expires_at"),)

    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"), primary_key=True)
    artifact_kind: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    artifact_version: Mapped[int] = mapped_column(Integer)
    claimed_by: Mapped[str] = mapped_column(String(256))
    claimed_at: Mapped[datetime]
    expires_at: Mapped[datetime]


class ReviewComment(Base):
    __tablename__ = "review_comments"
    __table_args__ = (Index("ix_review_comments_draft", "run_id", "artifact_kind", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"))
    artifact_kind: Mapped[str] = mapped_column(String(64))
    artifact_version: Mapped[int] = mapped_column(Integer)
    row_name: Mapped[str | None] = mapped_column(String(300))
    """The row discussed, as amendments name it; None: the draft as a whole."""
    author: Mapped[str] = mapped_column(String(256))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]


class GateSetting(Base):
    """One tenant's setting for one gate, changed by an admin (who, when and why kept)."""

    __tablename__ = "gate_settings"

    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    artifact_kind: Mapped[str] = mapped_column(String(64), primary_key=True)
    amender_may_approve: Mapped[bool] = mapped_column(Boolean)
    updated_by: Mapped[str] = mapped_column(String(256))
    updated_at: Mapped[datetime]
    reason: Mapped[str] = mapped_column(Text)
