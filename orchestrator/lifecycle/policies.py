"""Signoff policies: who may approve a gate, and how many approvals open it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from orchestrator.contracts.artifact_registry import declaration
from orchestrator.contracts.signals import ArtifactKind


class SignoffMode(StrEnum):
    SINGLE = "single"
    """One approval by an eligible approver."""
    UNANIMOUS = "unanimous"
    """Every designated approver."""
    MAJORITY = "majority"
    """More than half of the designated approvers."""
    N_OF_M = "n_of_m"
    """At least `required` of the designated approvers."""


#: Roles that may approve when a policy names none.
DEFAULT_APPROVER_ROLES = ("assessor", "compliance_lead", "ciso")


@dataclass(frozen=True)
class GatePolicy:
    mode: SignoffMode = SignoffMode.SINGLE
    approvers: tuple[str, ...] = ()
    """Designated approvers (actor ids). Required for unanimous, majority and N-of-M."""
    roles: tuple[str, ...] = DEFAULT_APPROVER_ROLES
    """The approver must hold one of these roles."""
    required: int = 1
    """For N-of-M: how many of the designated approvers."""
    separation_of_duties: bool = True
    """The actor who asked for the draft may not approve it."""
    require_decided: bool | None = None
    """Refuse an approval while the draft has rows nobody decided (None: the gate's
    default, on for the SoA and the POA&M; see `requires_decisions`)."""
    require_basis: bool = False
    """The SoA's gate (other gates have no rows it applies to): refuse an approval while
    applicable rows have no basis (ISO/IEC 27001 6.1.3 d): no treated risk of the register
    selects them and no legal, regulatory or contractual requirement is stated on them
    (orchestrator.service.soa_basis). Off unless asked:
    a first assessment's register is filled from its gap analysis, after the SoA."""

    def __post_init__(self) -> None:
        if self.mode is not SignoffMode.SINGLE and not self.approvers:
            raise ValueError(f"a {self.mode.value} policy needs designated approvers")
        if len(set(self.approvers)) != len(self.approvers):
            raise ValueError("designated approvers must be distinct")
        if self.mode is SignoffMode.N_OF_M and not 1 <= self.required <= len(self.approvers):
            raise ValueError("N-of-M needs 1 <= required <= number of approvers")
        if not self.roles:
            raise ValueError("a policy needs at least one approver role")

    def eligibility_problem(self, approver_id: str, roles: Iterable[str]) -> str | None:
        """Why an event by `approver_id`, carrying `roles`, may not count here (or None)."""
        carried = tuple(roles)
        if not set(carried) & set(self.roles):
            held = ", ".join(repr(role) for role in carried) or "none"
            return (
                f"approver role {held} may not approve this gate (allowed: {', '.join(self.roles)})"
            )
        if self.approvers and approver_id not in self.approvers:
            return f"{approver_id} is not a designated approver of this gate"
        return None

    def is_met(self, approvers: Iterable[str]) -> bool:
        collected = set(approvers)
        designated = collected & set(self.approvers)
        if self.mode is SignoffMode.SINGLE:
            return bool(collected)
        if self.mode is SignoffMode.UNANIMOUS:
            return designated == set(self.approvers)
        if self.mode is SignoffMode.MAJORITY:
            return len(designated) * 2 > len(self.approvers)
        return len(designated) >= self.required

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "approvers": list(self.approvers),
            "roles": list(self.roles),
            "required": self.required,
            "separation_of_duties": self.separation_of_duties,
            **({} if self.require_decided is None else {"require_decided": self.require_decided}),
            **({"require_basis": True} if self.require_basis else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GatePolicy:
        return cls(
            mode=SignoffMode(data.get("mode", "single")),
            approvers=tuple(data.get("approvers", ())),
            roles=tuple(data.get("roles", DEFAULT_APPROVER_ROLES)),
            required=int(data.get("required", 1)),
            separation_of_duties=bool(data.get("separation_of_duties", True)),
            require_decided=_bool(data.get("require_decided"), "require_decided", optional=True),
            require_basis=bool(_bool(data.get("require_basis", False), "require_basis")),
        )


DEFAULT_POLICY = GatePolicy()


def requires_decisions(policy: GatePolicy, kind: str) -> bool:
    """Whether undecided rows refuse an approval: the run's policy says, or by default the
    kind's declaration (the SoA's implementation statuses, the POA&M's owners)."""
    if policy.require_decided is not None:
        return policy.require_decided
    declared = declaration(kind)
    return bool(declared and declared.decided and declared.decided.by_default)


def _bool(value: Any, name: str, optional: bool = False) -> bool | None:
    if isinstance(value, bool) or (optional and value is None):
        return value
    raise ValueError(f"{name} must be true{', false or absent' if optional else ' or false'}")


def parse_policies(raw: Any) -> dict[ArtifactKind, GatePolicy]:
    """Validate `{artifact_kind: policy}` from a start request; raises ValueError."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValueError("approval_policies must be an object keyed by artifact kind")
    policies: dict[ArtifactKind, GatePolicy] = {}
    for key, value in raw.items():
        kind = ArtifactKind(key)
        if not isinstance(value, Mapping):
            raise ValueError(f"policy for {key} must be an object")
        policies[kind] = GatePolicy.from_json(value)
    return policies
