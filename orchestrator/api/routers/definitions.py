"""Lifecycle definitions, moving a run to another one, and a run's effects outside the
database with the authority that makes them (docs/engine.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.auth import Operator, Reader
from orchestrator.api.dependencies import IdempotencyHeader, Wait, await_fate_capped, signal_key
from orchestrator.api.paths import RunId
from orchestrator.api.problems import problem_responses
from orchestrator.api.schemas import IdempotencyKey, Reason
from orchestrator.lifecycle import definitions
from orchestrator.service import operations
from orchestrator.service.adoption import adopt_run
from orchestrator.service.authority import RunAuthority
from orchestrator.service.effect_views import EffectView, list_effects
from orchestrator.service.read_models import SignalReceipt


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid")


router = APIRouter(
    prefix="/api/v1", tags=["definitions"], responses=problem_responses(400, 401, 403, 404, 422)
)


class DefinitionView(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: int
    label: str
    content_hash: str
    current: bool = Field(description="New runs pin this one.")
    description: str
    steps: list[dict[str, Any]]
    policies: dict[str, Any]
    publishes: list[str]
    migrates_from: list[int]


class MigrateRequest(RequestBody):
    to_version: int = Field(ge=1, le=1_000_000)
    reason: Reason
    idempotency_key: IdempotencyKey | None = None


class AdoptRequest(RequestBody):
    reason: Reason


@router.get(
    "/definitions",
    response_model=list[DefinitionView],
    summary="The lifecycle definitions this deployment ships",
)
def index(principal: Reader) -> list[DefinitionView]:
    newest = definitions.current().version
    return [
        DefinitionView(
            version=d.version,
            label=d.label,
            content_hash=d.content_hash,
            current=d.version == newest,
            description=d.description,
            **d.content(),
            migrates_from=[m.from_version for m in d.migrations],
        )
        for d in definitions.shipped()
    ]


@router.post(
    "/workflows/{workflowRunId}/migrate",
    status_code=202,
    response_model=SignalReceipt,
    summary="Move a run to another lifecycle definition",
    description="Only to a shipped definition that declares a migration from the run's, "
    "while the run waits, is blocked or failed. Accepted: durable in the run's inbox.",
)
def migrate(
    run_id: RunId,
    body: MigrateRequest,
    principal: Operator,
    wait: Wait = 0,
    idempotency_key: IdempotencyHeader = None,
) -> SignalReceipt:
    key = signal_key(idempotency_key, body.idempotency_key)
    receipt = operations.migrate_definition(
        principal.actor, run_id, body.to_version, reason=body.reason, idempotency_key=key
    )
    return await_fate_capped(principal.actor, receipt, wait)


@router.get(
    "/workflows/{workflowRunId}/effects",
    response_model=list[EffectView],
    summary="A run's effects outside the database",
    description="Publications and their undoing (retractions, withdrawn approval "
    "requests), each with its status and attempts.",
)
def effects(run_id: RunId, principal: Reader) -> list[EffectView]:
    return list_effects(principal.actor, run_id)


@router.post(
    "/workflows/{workflowRunId}/adopt",
    response_model=RunAuthority,
    summary="Act for a run from now on",
    description="The key's principal and scopes become the run's authority (after its "
    "starter's key was revoked, say). Audited with the previous authority.",
)
def adopt(run_id: RunId, body: AdoptRequest, principal: Operator) -> RunAuthority:
    return adopt_run(
        principal.actor,
        run_id,
        reason=body.reason,
        authority=RunAuthority.of_principal(principal),
    )
