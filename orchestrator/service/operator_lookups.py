"""What an operator's command needs before it can name a tenant: whose run or handoff an
id is, and which tenants have any (the CLI acts across tenants, the API never does)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from orchestrator.contracts.errors import NotFound
from orchestrator.db.effect_models import Handoff
from orchestrator.db.models import Assessment, WorkflowRun
from orchestrator.db.risk_models import Risk, RiskProposal
from orchestrator.db.session import read_transaction
from orchestrator.engine.history import export_history

#: What a tenant-owned row is called in a "not found" message.
_Owned = type[WorkflowRun] | type[Assessment] | type[Handoff] | type[Risk] | type[RiskProposal]
_NAMES: dict[_Owned, str] = {
    WorkflowRun: "workflow run",
    Assessment: "assessment",
    Handoff: "handoff",
    Risk: "risk",
    RiskProposal: "risk proposal",
}


def _tenant_of(model: _Owned, row_id: uuid.UUID) -> str:
    with read_transaction() as session:
        tenant = session.scalar(select(model.tenant_id).where(model.id == row_id))
    if tenant is None:
        raise NotFound(f"{_NAMES[model]} {row_id} not found")
    return str(tenant)


def _tenants_with(model: _Owned) -> list[str]:
    with read_transaction() as session:
        return sorted(session.scalars(select(model.tenant_id).distinct()))


def tenant_of_run(run_id: uuid.UUID) -> str:
    return _tenant_of(WorkflowRun, run_id)


def tenant_of_assessment(assessment_id: uuid.UUID) -> str:
    return _tenant_of(Assessment, assessment_id)


def tenant_of_handoff(handoff_id: uuid.UUID) -> str:
    return _tenant_of(Handoff, handoff_id)


def tenant_of_risk(risk_id: uuid.UUID) -> str:
    return _tenant_of(Risk, risk_id)


def tenant_of_risk_proposal(proposal_id: uuid.UUID) -> str:
    return _tenant_of(RiskProposal, proposal_id)


def tenants_with_runs() -> list[str]:
    return _tenants_with(WorkflowRun)


def tenants_with_handoffs() -> list[str]:
    return _tenants_with(Handoff)


def run_history(run_id: uuid.UUID) -> dict[str, Any]:
    """Every signal the run decided, checked against the database first."""
    with read_transaction() as session:
        return export_history(session, run_id)
