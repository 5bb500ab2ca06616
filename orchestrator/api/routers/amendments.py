"""Reviewer amendments: change rows of a draft (status, applicability and justification,
owner, target date, note; a finding's severity and text; the report's assessor statement),
one row, a list of rows or every row a filter selects at a time; the result is the
artifact's next version, the one to approve."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestrator.api.auth import Approver
from orchestrator.api.dependencies import IdempotencyHeader, signal_key
from orchestrator.api.field_kinds import IdempotencyKey, IsoDay
from orchestrator.api.model_rules import exactly_one_of
from orchestrator.api.paths import ArtifactId, RunId
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.text import Text
from orchestrator.service.amendments import amend_artifact

router = APIRouter(
    prefix="/api/v1/workflows",
    tags=["amendments"],
    responses=problem_responses(400, 401, 403, 404, 409, 413, 422),
)


Assessed = Literal["implemented", "partially_implemented", "not_implemented", "not_applicable"]


class RowChanges(BaseModel):
    model_config = ConfigDict(extra="forbid")

    assessed_status: Assessed | None = None
    implementation_status: Assessed | None = Field(
        None, description="The SoA row's implementation status, as a reviewer assesses it"
    )
    applicable: bool | None = None
    justification: Text | None = Field(None, max_length=2000)
    legal_basis: Text | None = Field(
        None,
        max_length=2000,
        description="An SoA row's legal, regulatory or contractual requirement: its basis "
        "when no treated risk selects it",
    )
    owner: Text | None = Field(None, max_length=2000)
    target_date: IsoDay | None = None
    note: Text | None = Field(None, max_length=2000)
    severity: Literal["high", "medium", "low"] | None = Field(
        None, description="A gap finding's severity, as the reviewer rates it"
    )
    cause: Text | None = Field(None, max_length=2000, description="A gap finding's cause")
    effect: Text | None = Field(None, max_length=2000, description="A gap finding's effect")
    recommendation: Text | None = Field(None, max_length=2000)
    not_a_gap: bool | None = Field(
        None,
        description="A gap finding a reviewer judges not a gap (true, with "
        "not_a_gap_reason): it leaves the POA&M and the report's gap list and carries into "
        "later drafts until its evidence changes; false opens it again",
    )
    not_a_gap_reason: Text | None = Field(
        None, max_length=2000, description="Why the finding is not a gap (needed with true)"
    )
    conclusion: Text | None = Field(
        None, max_length=2000, description="The report's assessor conclusion (row `assessor`)"
    )
    scope_boundary: Text | None = Field(
        None, max_length=2000, description="The report's scope boundary (row `assessor`)"
    )
    period_start: IsoDay | None = Field(None, description="First day the assessment covers")
    period_end: IsoDay | None = Field(None, description="Last day the assessment covers")


RowName = Annotated[Text, Field(min_length=1, max_length=200)]


class RowAmendment(BaseModel):
    """The rows to change: exactly one of `row`, `rows` or `filter`."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra=exactly_one_of("row", "rows", "filter")
    )

    row: RowName | None = Field(
        None,
        description="The row's name: requirement_id (SoA; '<framework> <requirement_id>' "
        "when two selected frameworks share the id), control_id (gaps, maturity), id "
        "(POA&M), `assessor` (the report's statement)",
    )
    rows: list[RowName] | None = Field(
        None, min_length=1, max_length=2000, description="Several rows by name"
    )
    filter: dict[str, Any] | None = Field(
        None,
        description="Every row whose fields match, in the version read: row fields "
        "(framework, category, proposal, proposed_implementation_status, "
        "implementation_status, assessed_status, applicable, owner, proposed_owner, severity, "
        "priority, "
        "excluded_by) equal to a value, any of a list, or empty for null; `domain` (an SCF "
        'domain such as "IAC"), `text` (words in the id, title or justification), '
        "`undecided` (true: rows nobody decided yet)",
    )
    changes: RowChanges

    @model_validator(mode="after")
    def _one_selector(self) -> RowAmendment:
        if sum(x is not None for x in (self.row, self.rows, self.filter)) != 1:
            raise ValueError("name the rows with exactly one of: row, rows, filter")
        return self


class AmendmentRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: Text = Field(min_length=1, max_length=2000)
    rows: list[RowAmendment] = Field(min_length=1, max_length=500)
    idempotency_key: IdempotencyKey | None = None


class AmendmentView(BaseModel):
    artifact_id: uuid.UUID
    artifact_kind: ArtifactKind
    version: int
    based_on: int
    signal_id: uuid.UUID
    duplicate: bool


@router.post(
    "/{workflowRunId}/artifacts/{artifactId}/amendments",
    status_code=201,
    response_model=AmendmentView,
    summary="Amend rows of a draft",
    description="Writes the draft's next version with the rows changed (who, when "
    "and why recorded in its `amendments`); approvals then bind to it.",
)
def amend(
    run_id: RunId,
    artifact_id: ArtifactId,
    body: AmendmentRequest,
    principal: Approver,
    idempotency_key: IdempotencyHeader = None,
) -> dict[str, Any]:
    key = signal_key(idempotency_key, body.idempotency_key)
    rows = [
        r.model_dump(include={"row", "rows", "filter"}, exclude_none=True)
        | {"changes": r.changes.model_dump(exclude_none=True)}
        for r in body.rows
    ]
    receipt = amend_artifact(
        principal.actor, run_id, artifact_id, rows, reason=body.reason, idempotency_key=key
    )
    return AmendmentView(
        artifact_id=receipt.artifact_id,
        artifact_kind=receipt.artifact_kind,
        version=receipt.version,
        based_on=receipt.based_on,
        signal_id=receipt.signal_id,
        duplicate=receipt.duplicate,
    ).model_dump(mode="json")
