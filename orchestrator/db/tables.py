"""The models' tables, for Core statements on the hot path (no ORM unit of work)."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table

from orchestrator.db.models import (
    ApprovalEvent,
    Artifact,
    Assessment,
    AuditEvent,
    InboxSignal,
    Job,
    OutboxMessage,
    StepExecution,
    WorkflowRun,
)
from orchestrator.db.ops_models import WebhookSubscription

APPROVALS = cast(Table, ApprovalEvent.__table__)
ARTIFACTS = cast(Table, Artifact.__table__)
ASSESSMENTS = cast(Table, Assessment.__table__)
AUDIT = cast(Table, AuditEvent.__table__)
INBOX = cast(Table, InboxSignal.__table__)
JOBS = cast(Table, Job.__table__)
OUTBOX = cast(Table, OutboxMessage.__table__)
RUNS = cast(Table, WorkflowRun.__table__)
STEPS = cast(Table, StepExecution.__table__)
SUBSCRIPTIONS = cast(Table, WebhookSubscription.__table__)
