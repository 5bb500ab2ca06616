"""Tables of the control catalogues: imported catalogue versions, their controls, the
frameworks they crosswalk to, each framework's requirements and the requirement -> control
links. A catalogue version is immutable once imported; a newer release is a new row."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.db.models import Base, JsonDoc


class CatalogRow(Base):
    __tablename__ = "catalogs"
    __table_args__ = (UniqueConstraint("name", "version", name="uq_catalogs_name_version"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))  # scf_workbook, oscal_catalog, oscal_profile
    name: Mapped[str] = mapped_column(String(300))
    version: Mapped[str] = mapped_column(String(64))
    source_name: Mapped[str] = mapped_column(String(300))
    sha256: Mapped[str] = mapped_column(String(64))
    licence: Mapped[str] = mapped_column(String(300))
    attribution: Mapped[str] = mapped_column(Text)
    details: Mapped[dict[str, Any]] = mapped_column(JsonDoc)  # domains, evidence requests...
    imported_at: Mapped[datetime]


class CatalogControlRow(Base):
    __tablename__ = "catalog_controls"

    catalog_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("catalogs.id"), primary_key=True)
    control_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    domain: Mapped[str] = mapped_column(String(64))
    domain_name: Mapped[str] = mapped_column(String(300))
    title: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(Text)
    details: Mapped[dict[str, Any]] = mapped_column(JsonDoc)


class FrameworkRow(Base):
    __tablename__ = "frameworks"
    __table_args__ = (UniqueConstraint("catalog_id", "name", name="uq_frameworks_catalog_name"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    catalog_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("catalogs.id"), index=True)
    name: Mapped[str] = mapped_column(String(300))
    version: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(32))
    crosswalk: Mapped[str | None] = mapped_column(String(300))
    position: Mapped[int] = mapped_column(Integer)
    details: Mapped[dict[str, Any]] = mapped_column(JsonDoc)  # aliases, source columns, url


class FrameworkRequirementRow(Base):
    __tablename__ = "framework_requirements"

    framework_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("frameworks.id"), primary_key=True)
    requirement_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(Text)


class RequirementLinkRow(Base):
    __tablename__ = "requirement_links"
    __table_args__ = (Index("ix_requirement_links_framework", "framework_id"),)

    framework_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("frameworks.id"), primary_key=True)
    requirement_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    control_id: Mapped[str] = mapped_column(String(64), primary_key=True)
