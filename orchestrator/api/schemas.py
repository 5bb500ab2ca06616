"""Request bodies and the few response shapes the producer's views do not already give."""

from __future__ import annotations

import uuid
from enum import StrEnum
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from orchestrator.api.field_kinds import IdempotencyKey, RoleName
from orchestrator.api.model_rules import NOT_BLANK, depends_on, required_for
from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.origins import StartOrigin
from orchestrator.contracts.signals import ArtifactKind, SignalType
from orchestrator.contracts.text import NOT_BLANK as NOT_BLANK_PATTERN
from orchestrator.contracts.text import (
    NulFree,
    StatesNulFree,
    StatesNulFreeObject,
    Text,
)
from orchestrator.lifecycle.approval_checks import ApprovalDecision
from orchestrator.lifecycle.policies import SignoffMode
from orchestrator.service.producer import public_signal_type
from orchestrator.service.read_models import ArtifactView

T = TypeVar("T")

# The pattern goes before the NUL check, or the JSON Schema leaves it out.
Reason = Annotated[
    str,
    StringConstraints(min_length=1, max_length=2000, pattern=NOT_BLANK_PATTERN),
    NulFree,
    StatesNulFree,
]
TraceId = Annotated[Text, Field(min_length=1, max_length=128)]


def _accepted_by_producer(kind: SignalType) -> bool:
    try:
        public_signal_type(kind)
    except InvalidInput:
        return False
    return True


#: The signal types callers may send (the producer decides; the schema only lists them).
PublicSignalType = StrEnum(  # type: ignore[misc]
    "PublicSignalType", {t.name: t.value for t in SignalType if _accepted_by_producer(t)}
)


#: Start origins a program may state ("user" is the console's).
ApiStartOrigin = StrEnum(  # type: ignore[misc]
    "ApiStartOrigin", {o.name: o.value for o in StartOrigin if o is not StartOrigin.USER}
)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _approvers_unless_single(schema: dict[str, Any]) -> None:
    """States `GatePolicy`'s own checks: designated approvers, distinct, for every mode
    but single."""
    schema["properties"]["approvers"]["uniqueItems"] = True
    at_least = [
        {"properties": {"mode": {"const": SignoffMode.SINGLE.value}}},
        {"required": ["approvers"], "properties": {"approvers": {"minItems": 1}}},
    ]
    schema.setdefault("allOf", []).append({"anyOf": at_least})  # one model in clients


class CreateAssessment(_Request):
    organization_id: Text = Field(min_length=1, max_length=128, pattern=NOT_BLANK_PATTERN)
    name: Text = Field(min_length=1, max_length=300, pattern=NOT_BLANK_PATTERN)
    carry_over_from: uuid.UUID | None = Field(
        None,
        description="A previous period's assessment: the first SoA draft carries its last "
        "approved rows (reviewer-set values, with who approved them).",
    )


class SignoffPolicy(_Request):
    """Who may approve one gate, and how many approvals open it."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_approvers_unless_single)

    mode: SignoffMode = SignoffMode.SINGLE
    approvers: list[Annotated[Text, Field(min_length=1, max_length=256)]] = Field(
        default_factory=list,
        max_length=50,
        description="Designated approvers (principals); needed by all but `single`.",
    )
    roles: list[Annotated[Text, Field(min_length=1, max_length=64)]] | None = Field(
        None,
        min_length=1,
        max_length=20,
        description="Roles an approver must hold; default: assessor, compliance_lead, ciso.",
    )
    required: int = Field(1, ge=1, le=50, description="For n_of_m: how many approvers.")
    separation_of_duties: bool = Field(
        True, description="Whoever asked for a draft may not approve it."
    )
    require_decided: bool | None = Field(
        None,
        description="Refuse an approval while the draft has rows nobody decided (SoA rows "
        "without a reviewer-set implementation status, POA&M items or gap findings without "
        "an owner). Absent: on for the SoA and the POA&M, off for the other gates.",
    )
    require_basis: bool = Field(
        False,
        description="The SoA's gate (others have no rows it applies to): refuse an "
        "approval while applicable rows have no basis "
        "(ISO/IEC 27001 6.1.3 d): no treated risk of the organisation's register selects "
        "the row's control and no legal, regulatory or contractual requirement is stated "
        "on it (`legal_basis`). The gate's readiness names those rows either way.",
    )


class StartLifecycle(_Request):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=depends_on(
            "origin",
            "origin_ref",
            needing={
                o.value: {"type": "string", "format": "uuid"} if o.refers_to_run else NOT_BLANK
                for o in StartOrigin
                if o.needs_ref
            },
        ),
    )

    approval_policies: dict[ArtifactKind, SignoffPolicy] | None = Field(
        None,
        description="Signoff policy per artifact kind; gates not named approve with "
        "one eligible approver.",
    )
    idempotency_key: IdempotencyKey | None = Field(
        None,
        description="Same key and input: the same run back. The Idempotency-Key "
        "header may carry it instead.",
    )
    trace_id: TraceId | None = None
    origin: ApiStartOrigin = Field(
        ApiStartOrigin("api"),
        description="How the run is started: api, or a schedule, reassessment, retry or "
        "replay (these name what they follow in origin_ref).",
    )
    origin_ref: Annotated[Text, Field(min_length=1, max_length=256)] | None = Field(
        None,
        description="The schedule's name, or the earlier run a reassessment, retry or "
        "replay follows.",
    )


class SignalRequest(_Request):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=required_for(
            "type",
            [t.value for t in SignalType if _accepted_by_producer(t) and t.names_approval_event],
            "approval_event_id",
            {"type": "string", "format": "uuid"},
        ),
    )

    type: PublicSignalType  # type: ignore[valid-type]
    idempotency_key: IdempotencyKey | None = Field(
        None, description="Unique per run; the Idempotency-Key header may carry it instead."
    )
    payload: Annotated[dict[str, Any], NulFree, StatesNulFreeObject] = Field(default_factory=dict)
    approval_event_id: uuid.UUID | None = Field(
        None, description="Approval signals name the approval event they act on."
    )
    trace_id: TraceId | None = None


class ControlRequest(_Request):
    """Cancel, resume, retry or block: a reason for the audit log."""

    reason: Reason
    idempotency_key: IdempotencyKey | None = None


class ApprovalRequest(_Request):
    """A reviewer's decision on one exact artifact version. The approver is the key's
    principal, never a field of the request."""

    artifact_kind: ArtifactKind
    artifact_version: int = Field(ge=1, le=1_000_000)
    decision: ApprovalDecision = ApprovalDecision.APPROVED
    approver_role: RoleName | None = Field(
        None,
        description="Act in this one role, which an admin must have granted to the key's "
        "principal (422 `role_not_held` otherwise). Left out, the event carries "
        "every role the principal holds.",
    )
    comment: Text | None = Field(None, max_length=4000)


class ReprocessRequest(_Request):
    reason: Reason
    new_version: bool = Field(description="Draft new artifact versions (explicit by design).")
    dry_run: bool = Field(False, description="Only say what would be superseded.")
    idempotency_key: IdempotencyKey | None = None


class NewVersionRequest(_Request):
    artifact_kind: ArtifactKind
    reason: Reason
    idempotency_key: IdempotencyKey | None = None


class Page(BaseModel, Generic[T]):
    """One page of a listing; pass `next_cursor` back as `cursor` for the next one."""

    items: list[T]
    next_cursor: str | None


class ArtifactDetail(ArtifactView):
    content: dict[str, Any]


class SupersededArtifact(BaseModel):
    kind: str
    version: int


class ReprocessPlan(BaseModel):
    """What reprocessing a step would supersede (a dry run changes nothing)."""

    target: str
    superseded_steps: list[str]
    superseded_artifacts: list[SupersededArtifact]
    approvals_to_collect_again: list[str]
    new_versions: list[str]
