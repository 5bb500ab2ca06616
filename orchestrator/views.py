"""Read models returned by the producer (and later the API): plain, frozen, JSON-ready."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from orchestrator.contracts.signals import SignalFate
from orchestrator.db.models import Assessment, WorkflowRun


class _View(BaseModel):
    model_config = ConfigDict(frozen=True)


class AssessmentView(_View):
    id: uuid.UUID
    tenant_id: str
    organization_id: str
    name: str
    status: str
    created_at: datetime

    @classmethod
    def of(cls, row: Assessment) -> AssessmentView:
        return cls(id=row.id, tenant_id=row.tenant_id, organization_id=row.organization_id,
                   name=row.name, status=row.status, created_at=row.created_at)


class RunView(_View):
    id: uuid.UUID
    assessment_id: uuid.UUID
    tenant_id: str
    organization_id: str
    status: str
    current_step: str | None
    reason: str | None
    version: int
    trace_id: str
    context: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None

    @classmethod
    def of(cls, row: WorkflowRun) -> RunView:
        return cls(id=row.id, assessment_id=row.assessment_id, tenant_id=row.tenant_id,
                   organization_id=row.organization_id, status=row.status,
                   current_step=row.current_step, reason=row.reason, version=row.version,
                   trace_id=row.trace_id, context=dict(row.context or {}),
                   created_at=row.created_at, updated_at=row.updated_at,
                   completed_at=row.completed_at)


class SignalReceipt(_View):
    signal_id: uuid.UUID
    fate: SignalFate
    reason: str | None
    duplicate: bool
    run: RunView


class DocumentView(_View):
    id: uuid.UUID
    filename: str
    media_type: str
    size_bytes: int
    sha256: str
    status: str
    duplicate: bool = False
