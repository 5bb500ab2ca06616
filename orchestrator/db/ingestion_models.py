"""Ingestion's own tables: each document's outcome, and where each chunk came from.

Kept beside (not inside) the core models; migration 0005 creates them.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.db.models import Base


class DocumentOutcome(Base):
    """What ingesting one document did: ingested (with counts), a duplicate of another
    document, or failed with a typed reason."""

    __tablename__ = "document_outcomes"
    __table_args__ = (Index("ix_document_outcomes_text", "assessment_id", "text_sha256"),)

    document_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("documents.id"), primary_key=True)
    assessment_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    outcome: Mapped[str] = mapped_column(String(16))
    error_code: Mapped[str | None] = mapped_column(String(32))
    error_message: Mapped[str | None] = mapped_column(Text)
    media_type: Mapped[str] = mapped_column(String(128))
    pages: Mapped[int | None] = mapped_column(Integer)
    characters: Mapped[int] = mapped_column(Integer, default=0)
    chunks: Mapped[int] = mapped_column(Integer, default=0)
    duplicate_chunks: Mapped[int] = mapped_column(Integer, default=0)
    text_sha256: Mapped[str | None] = mapped_column(String(64))
    duplicate_of: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    doc_metadata: Mapped[dict[str, Any]] = mapped_column("metadata", default=dict)
    created_at: Mapped[datetime]


class ChunkProvenance(Base):
    """The pages a chunk spans (PDF); its document and heading path live on the chunk."""

    __tablename__ = "chunk_provenance"

    chunk_id: Mapped[str] = mapped_column(ForeignKey("document_chunks.id"), primary_key=True)
    document_id: Mapped[uuid.UUID] = mapped_column(Uuid, index=True)
    page_start: Mapped[int | None] = mapped_column(Integer)
    page_end: Mapped[int | None] = mapped_column(Integer)
