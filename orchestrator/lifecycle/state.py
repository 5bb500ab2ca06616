"""A run's decisive state: everything the decision function needs, nothing it must fetch."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.policies import DEFAULT_POLICY, GatePolicy


def _empty() -> Mapping[Any, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class RunState:
    run_id: uuid.UUID
    tenant_id: str
    organization_id: str
    assessment_id: uuid.UUID
    status: WorkflowStatus = WorkflowStatus.PENDING
    step: Step | None = None
    active_job_id: str | None = None
    framework: str | None = None
    """The selected frameworks as one display string ("SOC 2; ISO/IEC 27001:2022")."""
    frameworks: tuple[str, ...] = ()
    """The selected frameworks, as the person named them (matched against `catalogs`)."""
    categories: Mapping[str, tuple[str, ...]] = field(default_factory=_empty)
    """Categories chosen with the frameworks (SOC 2's Availability, Privacy...): framework
    name as selected, or "*" for every selected framework -> category names."""
    catalogs: Mapping[str, str] = field(default_factory=_empty)
    """Catalogue versions pinned when the run started: catalogue name -> version id."""
    attempts: Mapping[Step, int] = field(default_factory=_empty)
    """How many times each step was entered; the current attempt of `step` is the last."""
    artifacts: Mapping[ArtifactKind, int] = field(default_factory=_empty)
    """Current draft version of each artifact kind."""
    approved: Mapping[ArtifactKind, int] = field(default_factory=_empty)
    """Approved version of each artifact kind (its gate's policy was met)."""
    collected: Mapping[ArtifactKind, tuple[str, ...]] = field(default_factory=_empty)
    """Approvers counted so far for the current version (multi-party policies)."""
    rejected: Mapping[ArtifactKind, int] = field(default_factory=_empty)
    """A version a reviewer rejected or sent back; it waits for an explicit new version."""
    drafted_by: Mapping[ArtifactKind, str] = field(default_factory=_empty)
    """Who asked for the current draft (separation of duties)."""
    earlier_drafters: Mapping[ArtifactKind, tuple[str, ...]] = field(default_factory=_empty)
    """Who asked for or amended an earlier version since the last approved one: they may
    not approve the version waiting either (separation of duties)."""
    policies: Mapping[ArtifactKind, GatePolicy] = field(default_factory=_empty)
    """Signoff policies that differ from the default, fixed when the run started."""
    definition_version: int = 1
    """The lifecycle definition pinned when the run started (lifecycle.definitions)."""
    definition_hash: str | None = None
    """Its content hash; None for runs started before definitions were pinned (v1)."""
    handoff: str | None = None
    """The handoff the run is blocked at: an effect outside the database needs a person."""
    uploads_during_ingestion: bool = False
    """Documents were uploaded after the current ingestion attempt was queued: it may not
    have seen them, so another attempt must follow it (see decide's documents rule)."""
    blocked_from: WorkflowStatus | None = None
    block_kind: str | None = None
    reason: str | None = None
    """Why the run is blocked or failed."""

    def evolve(self, **changes: Any) -> RunState:
        return replace(self, **changes)

    def attempt(self, step: Step) -> int:
        return self.attempts.get(step, 0)

    def with_entry(self, mapping_name: str, key: Any, value: Any) -> RunState:
        updated = dict(getattr(self, mapping_name))
        updated[key] = value
        changes: dict[str, Any] = {mapping_name: MappingProxyType(updated)}
        return replace(self, **changes)

    def without_entry(self, mapping_name: str, key: Any) -> RunState:
        updated = {k: v for k, v in getattr(self, mapping_name).items() if k != key}
        changes: dict[str, Any] = {mapping_name: MappingProxyType(updated)}
        return replace(self, **changes)

    def drafted(self, kind: ArtifactKind, by: str) -> RunState:
        """A new version of `kind` asked for or amended by `by`. Whoever drafted the one it
        replaces stays barred from approving it unless that one was approved."""
        before = self.drafted_by.get(kind)
        state = self.with_entry("drafted_by", kind, by)
        if before is None or before == by or self.is_approved(kind):
            return state
        earlier = self.earlier_drafters.get(kind, ())
        if before in earlier:
            return state
        return state.with_entry("earlier_drafters", kind, (*earlier, before))

    def gate_opened(self, kind: ArtifactKind, version: int) -> RunState:
        return self.with_entry("approved", kind, version).without_entry("earlier_drafters", kind)

    def authors(self, kind: ArtifactKind) -> tuple[str, ...]:
        """Everyone who asked for or amended a version of `kind` since its last approved one."""
        current = self.drafted_by.get(kind)
        earlier = self.earlier_drafters.get(kind, ())
        return earlier if current is None or current in earlier else (*earlier, current)

    def is_approved(self, kind: ArtifactKind) -> bool:
        version = self.artifacts.get(kind)
        return version is not None and self.approved.get(kind) == version

    def policy(self, kind: ArtifactKind) -> GatePolicy:
        return self.policies.get(kind, DEFAULT_POLICY)

    # --- persistence form (the run row keeps this as JSON) ---
    def context(self) -> dict[str, Any]:
        return {
            "framework": self.framework,
            "frameworks": list(self.frameworks),
            **(
                {"categories": {k: list(v) for k, v in self.categories.items()}}
                if self.categories
                else {}
            ),
            "catalogs": dict(self.catalogs),
            "attempts": {k.value: v for k, v in self.attempts.items()},
            "artifacts": {k.value: v for k, v in self.artifacts.items()},
            "approved": {k.value: v for k, v in self.approved.items()},
            "collected": {k.value: list(v) for k, v in self.collected.items()},
            "rejected": {k.value: v for k, v in self.rejected.items()},
            "drafted_by": {k.value: v for k, v in self.drafted_by.items()},
            **(
                {"earlier_drafters": {k.value: list(v) for k, v in self.earlier_drafters.items()}}
                if self.earlier_drafters
                else {}
            ),
            "policies": {k.value: p.to_json() for k, p in self.policies.items()},
            "definition": {"version": self.definition_version, "hash": self.definition_hash},
            "handoff": self.handoff,
            "blocked_from": self.blocked_from.value if self.blocked_from else None,
            "block_kind": self.block_kind,
            "active_job_id": self.active_job_id,
            "uploads_during_ingestion": self.uploads_during_ingestion,
        }

    @classmethod
    def from_row(
        cls,
        *,
        run_id: uuid.UUID,
        tenant_id: str,
        organization_id: str,
        assessment_id: uuid.UUID,
        status: str,
        step: str | None,
        reason: str | None,
        context: Mapping[str, Any],
    ) -> RunState:
        blocked_from = context.get("blocked_from")
        definition = context.get("definition") or {}

        def kinds(name: str, convert: Any = int) -> Mapping[ArtifactKind, Any]:
            return MappingProxyType(
                {ArtifactKind(k): convert(v) for k, v in (context.get(name) or {}).items()}
            )

        return cls(
            run_id=run_id,
            tenant_id=tenant_id,
            organization_id=organization_id,
            assessment_id=assessment_id,
            status=WorkflowStatus(status),
            step=Step(step) if step else None,
            active_job_id=context.get("active_job_id"),
            framework=context.get("framework"),
            frameworks=tuple(context.get("frameworks") or ()),
            categories=MappingProxyType(
                {k: tuple(v) for k, v in (context.get("categories") or {}).items()}
            ),
            catalogs=MappingProxyType(dict(context.get("catalogs") or {})),
            attempts=MappingProxyType(
                {Step(k): int(v) for k, v in (context.get("attempts") or {}).items()}
            ),
            artifacts=kinds("artifacts"),
            approved=kinds("approved"),
            collected=kinds("collected", tuple),
            rejected=kinds("rejected"),
            drafted_by=kinds("drafted_by", str),
            earlier_drafters=kinds("earlier_drafters", tuple),
            policies=kinds("policies", GatePolicy.from_json),
            definition_version=int(definition.get("version") or 1),
            definition_hash=definition.get("hash"),
            handoff=context.get("handoff"),
            uploads_during_ingestion=bool(context.get("uploads_during_ingestion")),
            blocked_from=WorkflowStatus(blocked_from) if blocked_from else None,
            block_kind=context.get("block_kind"),
            reason=reason,
        )
