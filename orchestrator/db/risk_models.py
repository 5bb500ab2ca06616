"""The risk register: an organisation's risks, carried across its assessments, each change
a new version (migration 0023). A risk's row names it and its newest version; the versions
hold the content, so the history is read as written."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.contracts.ids import new_id
from orchestrator.db.models import Base, BigId, JsonDoc


class Risk(Base):
    __tablename__ = "risks"
    __table_args__ = (Index("ix_risks_organization", "tenant_id", "organization_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128))
    organization_id: Mapped[str] = mapped_column(String(128))
    version: Mapped[int] = mapped_column(Integer)
    """The newest version's number."""
    created_by: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class RiskVersion(Base):
    __tablename__ = "risk_versions"
    __table_args__ = (UniqueConstraint("risk_id", "version", name="uq_risk_version"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    risk_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("risks.id"))
    version: Mapped[int] = mapped_column(Integer)
    change: Mapped[str] = mapped_column(String(16))
    """created, updated or accepted (contracts.risk_method.RiskChange)."""
    assessment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("assessments.id"))
    """The assessment the change was made through."""
    title: Mapped[str] = mapped_column(String(300))
    asset: Mapped[str] = mapped_column(Text)
    threat: Mapped[str] = mapped_column(Text)
    vulnerability: Mapped[str] = mapped_column(Text)
    likelihood: Mapped[int] = mapped_column(Integer)
    impact: Mapped[int] = mapped_column(Integer)
    owner: Mapped[str] = mapped_column(String(256))
    treatment: Mapped[str] = mapped_column(String(16))
    treatment_plan: Mapped[str] = mapped_column(Text)
    controls: Mapped[list[str]] = mapped_column(JsonDoc)
    requirements: Mapped[list[dict[str, Any]]] = mapped_column(JsonDoc)
    residual_likelihood: Mapped[int | None] = mapped_column(Integer)
    residual_impact: Mapped[int | None] = mapped_column(Integer)
    accepted_by: Mapped[str | None] = mapped_column(String(256))
    accepted_at: Mapped[datetime | None]
    acceptance_note: Mapped[str | None] = mapped_column(Text)
    actor_id: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime]


class RiskProposal(Base):
    """A risk a gap finding proposed (migration 0026): not in the register until a person
    accepts it (a new risk), merges it (the finding linked to a risk held) or rejects it."""

    __tablename__ = "risk_proposals"
    __table_args__ = (
        UniqueConstraint("assessment_id", "finding", name="uq_risk_proposal_finding"),
        Index("ix_risk_proposals_risk", "risk_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128))
    organization_id: Mapped[str] = mapped_column(String(128))
    assessment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("assessments.id"))
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"))
    gap_version: Mapped[int] = mapped_column(Integer)
    """The gap analysis version that proposed it (last)."""
    finding: Mapped[str] = mapped_column(String(200))
    """The gap finding's name (its requirement, as the gap analysis names it)."""
    content: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    """The proposed risk and its reason (workers.analysis.risk_proposal)."""
    status: Mapped[str] = mapped_column(String(16))
    """proposed, accepted, merged or rejected (contracts.risk_method.ProposalStatus)."""
    risk_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("risks.id"))
    decision_note: Mapped[str | None] = mapped_column(Text)
    decided_by: Mapped[str | None] = mapped_column(String(256))
    decided_at: Mapped[datetime | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
