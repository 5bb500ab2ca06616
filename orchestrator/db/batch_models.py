"""Batches of a job that fans out: each a slice of the job's items any worker of its queue
may take. The job's step completes when every batch has (the database says so, not a
chord or a result backend)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.db.models import Base


class JobBatch(Base):
    __tablename__ = "job_batches"
    __table_args__ = (
        UniqueConstraint("job_id", "seq", name="uq_job_batches_seq"),
        Index("ix_job_batches_run", "run_id", "step"),
    )

    id: Mapped[str] = mapped_column(String(240), primary_key=True)
    job_id: Mapped[str] = mapped_column(String(200))
    run_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    tenant_id: Mapped[str] = mapped_column(String(128))
    step: Mapped[str] = mapped_column(String(64))
    seq: Mapped[int] = mapped_column(Integer)
    items: Mapped[dict[str, Any]]
    """{"ids": [...]}: what this batch works on (chunk ids for embedding)."""
    status: Mapped[str] = mapped_column(String(16))
    """queued, started, succeeded or failed (its attempts used up)."""
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_until: Mapped[datetime | None]
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
