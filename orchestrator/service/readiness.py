"""What is still undecided on a draft before its gate: rows a person has not decided, and
for the report, inputs nobody approved.

- Statement of Applicability: applicable rows without a reviewer-set implementation
  status (a proposal is not a decision; not-applicable rows were decided by the person's
  exclusion or the categories they chose, or by an amendment).
- Gap analysis and POA&M: findings and items without an owner a person set.
- Maturity assessment: nothing is tracked (its levels are the system's proposal, read as one).
- Report: every input of its sign-off that was not approved when it was drafted.

The gate's policy (`require_decided`, on by default for the SoA and the POA&M) decides
whether undecided rows refuse an approval; an unapproved input always refuses the report.
An SoA's readiness also names its rows with no basis (`stored_readiness`); the SoA gate's
`require_basis` policy makes them refuse an approval too.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.artifact_registry import Decided, declaration
from orchestrator.contracts.errors import NotFound
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Artifact
from orchestrator.db.session import read_transaction
from orchestrator.engine.run_rows import RunRecord, state_of
from orchestrator.lifecycle.definition import APPROVED_KINDS
from orchestrator.lifecycle.policies import GatePolicy, requires_decisions
from orchestrator.service.draft_rows import names_of, rows_of
from orchestrator.service.producer import load_run
from orchestrator.service.soa_basis import held_risks, no_basis

SHOWN = 20  # a refusal names this many rows, then how many more
#: The drafts people approve, in lifecycle order.
GATED = APPROVED_KINDS


@dataclass(frozen=True)
class Readiness:
    kind: str
    version: int
    rows: int
    undecided: list[str]
    """Row names (as amendments name them) nobody decided yet."""
    what: str
    """What an undecided row lacks, in words."""
    required: bool
    """The gate's policy refuses an approval while rows are undecided."""
    unapproved_inputs: list[str] = field(default_factory=list)
    """Report only: its inputs that were not approved ("Scope v1")."""
    no_basis: list[str] | None = None
    """SoA only: rows no treated risk, stated requirement or exclusion reason rests on
    (orchestrator.service.soa_basis), read against the register as it stands."""
    basis_required: bool = False
    """The gate's policy (`require_basis`) refuses an approval while rows have no basis."""

    @property
    def ready(self) -> bool:
        return (
            not self.unapproved_inputs
            and not (self.required and self.undecided)
            and not (self.basis_required and self.no_basis)
        )

    def refusal(self) -> str | None:
        """Why an approval of this version is refused, or None."""
        label = f"{self.kind} version {self.version}"
        if self.unapproved_inputs:
            return (
                f"{label} rests on inputs nobody approved: {', '.join(self.unapproved_inputs)}; "
                "approve them, then approve the report drafted again"
            )
        if self.required and self.undecided:
            return (
                f"{label} has {len(self.undecided)} of {self.rows} {self.what}: "
                f"{_named(self.undecided)}. Set them by amendment (one amendment can set a "
                'field on many rows: {"filter": {"undecided": true}, "changes": ...}), or '
                "start the run with a policy for this gate that does not require decisions"
            )
        if self.basis_required and self.no_basis:
            return (
                f"{label} has {len(self.no_basis)} of {self.rows} rows with no basis "
                f"(ISO/IEC 27001 6.1.3 d): {_named(self.no_basis)}. Record the risks whose "
                "treatment selects their controls in the register, or state the legal, "
                "regulatory or contractual requirement on each row by amendment "
                "(`legal_basis`); the gate's policy asks for a basis (`require_basis`)"
            )
        return None

    def to_json(self, listed: int | None = None) -> dict[str, Any]:
        """`listed`: name at most this many undecided rows (all when None)."""
        return {
            "artifact_kind": str(self.kind),
            "version": self.version,
            "rows": self.rows,
            "undecided": len(self.undecided),
            "undecided_rows": self.undecided[:listed] if listed is not None else self.undecided,
            "what": self.what,
            "required": self.required,
            "unapproved_inputs": self.unapproved_inputs,
            **(
                {}
                if self.no_basis is None
                else {
                    "basis_required": self.basis_required,
                    "no_basis": len(self.no_basis),
                    "no_basis_rows": self.no_basis[:listed]
                    if listed is not None
                    else self.no_basis,
                }
            ),
            "ready": self.ready,
            "refusal": self.refusal(),
        }


def readiness(kind: str, version: int, content: dict[str, Any], policy: GatePolicy) -> Readiness:
    required = requires_decisions(policy, kind)
    if kind is ArtifactKind.REPORT:
        return Readiness(kind, version, 0, [], "", required, unapproved_inputs(content))
    rows_at, decided = rows_of(kind), _decided(kind)
    rows = [r for r in content.get(rows_at.list_name, []) if isinstance(r, dict)] if rows_at else []
    what = decided.what if decided is not None else ""
    return Readiness(kind, version, len(rows), undecided_rows(kind, content), what, required)


def undecided_rows(kind: str, content: dict[str, Any]) -> list[str]:
    """The names of the rows of `content` nobody decided yet (empty for kinds not tracked)."""
    decided, rows_at = _decided(kind), rows_of(kind)
    if decided is None or rows_at is None:
        return []
    fields = decided.fields
    list_name, key = rows_at
    rows = [r for r in content.get(list_name, []) if isinstance(r, dict)]
    return [
        name
        for name, row in zip(names_of(rows, key), rows, strict=True)
        if row.get("applicable", True) is not False and not all(_set(row.get(f)) for f in fields)
    ]


def _decided(kind: str) -> Decided | None:
    """What a person must set on each row of `kind` (its declaration), or None."""
    found = declaration(kind)
    return found.decided if found is not None else None


def unapproved_inputs(report: dict[str, Any]) -> list[str]:
    """The report's sign-off inputs that carry a gate of their own and were not approved."""
    return [
        f"{entry.get('label')} v{entry.get('version')}"
        for entry in report.get("signoff", [])
        if entry.get("gated", True) and entry.get("status") != "approved"
    ]


def _set(value: Any) -> bool:
    return value is not None and str(value).strip() != ""


def _named(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


@retry_busy
def artifact_readiness(actor: Actor, run_id: uuid.UUID, artifact_id: uuid.UUID) -> Readiness:
    """What is undecided on one version of a run's draft, under the run's gate policy."""
    with read_transaction() as session:
        run = load_run(session, actor, run_id)
        stored = session.get(Artifact, artifact_id)
        if stored is None or stored.run_id != run.id:
            raise NotFound(f"run {run_id} has no artifact {artifact_id}")
        return stored_readiness(session, run, stored)


@retry_busy
def gate_readiness(actor: Actor, run_id: uuid.UUID) -> list[dict[str, Any]]:
    """Each approval gate the run has a draft for: its current version, whether a person
    approved it, and what is still undecided on it."""
    with read_transaction() as session:
        run = load_run(session, actor, run_id)
        state = state_of(run)
        gates = []
        for kind in GATED:
            version = state.artifacts.get(kind)
            if version is None:
                continue
            stored = session.scalar(
                select(Artifact).where(
                    Artifact.run_id == run.id,
                    Artifact.kind == kind.value,
                    Artifact.version == version,
                )
            )
            if stored is None:
                continue
            ready = stored_readiness(session, run, stored)
            gates.append(
                {"approved": state.is_approved(kind), "artifact_id": str(stored.id)}
                | ready.to_json()
            )
        return gates


def stored_readiness(session: Session, run: RunRecord, stored: Artifact) -> Readiness:
    """A stored draft's readiness under the run's policy for its gate; an SoA's names its
    rows with no basis, read against the register now, and says whether the policy asks
    for one."""
    kind = ArtifactKind(stored.kind)
    policy = state_of(run).policy(kind)
    found = readiness(kind, stored.version, stored.content, policy)
    if kind is not ArtifactKind.SOA:
        return found
    risks = held_risks(session, run.tenant_id, run.organization_id)
    return replace(
        found, no_basis=no_basis(stored.content, risks), basis_required=policy.require_basis
    )
