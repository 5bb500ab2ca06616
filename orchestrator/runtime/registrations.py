"""Every module that registers a handler for a declared name: each kind's drafting
function and what it computes ahead, its console tables, form and chart, and each sweep's
function. The entry points import this module (the Celery app's tasks, the API and its
console, the CLI's commands that run handlers, the embedded worker), so a lookup finds
every registration in every process; `tests/architecture` fails on a declared name
nothing here registers.
"""

# ruff: noqa: F401 (each import registers what its module defines)
from __future__ import annotations

from orchestrator.console import amend_fields, charts, draft_tables
from orchestrator.notifications import effect_sweep
from orchestrator.notifications import sweep as delivery_sweep
from orchestrator.service import review_claims
from orchestrator.sweeps import (
    approval_waits,
    evidence_expiry,
    lost_jobs,
    missing_messages,
    overdue_requests,
    pending_signals,
    sla,
    stale,
    unpublished_outbox,
)
from workers.analysis import (
    evidence,
    evidence_batches,
    gaps,
    maturity,
    poam,
    pre_analysis,
    scope,
    soa,
)
