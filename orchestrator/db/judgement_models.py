"""Reviewers' amendments to how a document was judged: its kind and whether it was adopted.

Append-only: each row is one amendment (who, when, why, the values before and after);
a field left empty keeps what earlier amendments, or the content, said. The drafts read
the latest value of each field per document. Migration 0009 creates the table.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.db.models import Base, BigId


class DocumentJudgementAmendment(Base):
    __tablename__ = "document_judgement_amendments"
    __table_args__ = (
        Index("ix_document_judgement_amendments_assessment", "assessment_id", "id"),
        UniqueConstraint("document_id", "idempotency_key", name="uq_document_judgement_key"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    assessment_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    document_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("documents.id"))
    kind: Mapped[str | None] = mapped_column(String(32))
    adoption: Mapped[str | None] = mapped_column(String(32))
    kind_before: Mapped[str | None] = mapped_column(String(32))
    adoption_before: Mapped[str | None] = mapped_column(String(32))
    actor_id: Mapped[str] = mapped_column(String(256))
    reason: Mapped[str] = mapped_column(Text)
    idempotency_key: Mapped[str] = mapped_column(String(256))
    request_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
