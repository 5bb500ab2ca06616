"""Who may decide a draft waiting at its gate, why a person may not, and who can instead.

A person may decide when their key may approve (approve scope), they hold a role the
gate's policy accepts (granted by an admin), they are a designated approver where the
policy names some, they have not approved this version already, and (separation of
duties) they did not ask for it: an amendment makes its author the one who asked, unless
the tenant's setting for the gate lets amenders approve (`gate_settings`); nor did they
ask for or amend any earlier version since the last approved one (no waiver for those).

The same rules the run applies to an approval event (`approval_checks`), said in words
before the person tries.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.db.apikey_models import ApiKey
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Artifact
from orchestrator.db.role_models import RoleGrant
from orchestrator.db.session import read_transaction
from orchestrator.engine.run_rows import RunRow, state_of
from orchestrator.lifecycle.approval_signals import position
from orchestrator.lifecycle.definition import (
    APPROVED_ANY_TIME,
    APPROVED_AT,
    APPROVED_KINDS,
    PRODUCER_OF,
    SCOPE_APPROVAL_DEADLINE,
)
from orchestrator.lifecycle.policies import GatePolicy
from orchestrator.lifecycle.state import RunState
from orchestrator.service.apikeys import Principal, Scope
from orchestrator.service.gate_settings import amender_may_approve
from orchestrator.service.oidc_access import group_access
from orchestrator.service.read_models import RunView
from orchestrator.service.roles import held_roles

_DECIDES = (Scope.APPROVE.value, Scope.ADMIN.value)


def state_of_view(run: RunView) -> RunState:
    """A run as read by the pages: it holds every column the decisive state reads."""
    return state_of(cast(RunRow, run))


def decision_gates(state: RunState) -> list[ArtifactKind]:
    """The drafts waiting for decisions now: the gate the run waits at, and a kind approved
    any time (the scope) while its current draft is unapproved, until the report's gate."""
    gates: list[ArtifactKind] = []
    gate = APPROVED_AT.get(state.step) if state.step is not None else None
    if state.status is WorkflowStatus.WAITING_FOR_APPROVAL and gate is not None:
        gates.append(gate)
    gates += [
        kind
        for kind in APPROVED_KINDS
        if kind in APPROVED_ANY_TIME
        and kind in state.artifacts
        and not state.is_approved(kind)
        and state.rejected.get(kind) != state.artifacts.get(kind)
        and not state.status.is_terminal
        and position(state, PRODUCER_OF[kind]) > 0
        and position(state, SCOPE_APPROVAL_DEADLINE) <= 0
    ]
    return gates


def amended_by(version: int, content: dict[str, Any]) -> set[str]:
    """Who amended this version into being: the authors of the amendment that wrote it, or,
    for a report drafted again from an amended version, of that amendment."""
    made = {
        str(a.get("by"))
        for a in content.get("amendments") or []
        if isinstance(a, dict) and a.get("version") == version
    }
    if made:
        return made
    carried = content.get("carried_forward")
    source = carried.get("from_version") if isinstance(carried, dict) else None
    if source != version - 1:
        return set()
    return {
        str(change.get("by"))
        for row in content.get("statement") or []
        if isinstance(row, dict)
        for change in row.get("reviewer_changes") or []
        if isinstance(change, dict) and change.get("version") == source
    }


def waiver(
    session: Session, tenant_id: str, kind: ArtifactKind, artifact_id: uuid.UUID, who: str
) -> bool:
    """True when `who` amended this version and the tenant's setting lets amenders approve."""
    stored = session.get(Artifact, artifact_id)
    if stored is None or not amender_may_approve(session, tenant_id, kind):
        return False
    return who in amended_by(stored.version, stored.content)


def granted_roles(principal: Principal, policy: GatePolicy, held: Iterable[str]) -> tuple[str, ...]:
    """The gate's roles this person holds (granted, never claimed)."""
    mine = set(held)
    return tuple(role for role in policy.roles if role in mine)


def eligible_roles(policy: GatePolicy, who: str, roles: Iterable[str]) -> tuple[str, ...]:
    return tuple(role for role in roles if policy.eligibility_problem(who, (role,)) is None)


def acting_roles(
    principal: Principal,
    state: RunState,
    kind: ArtifactKind,
    held: Iterable[str],
    waived: bool = False,
) -> tuple[str, ...]:
    """The roles with which this person may decide on `kind` now; empty: not theirs.
    `waived`: they amended this version and the gate's setting lets amenders approve."""
    if not principal.allows(Scope.APPROVE):
        return ()
    policy = state.policy(kind)
    me = principal.principal
    if policy.separation_of_duties and state.drafted_by.get(kind) == me and not waived:
        return ()
    if policy.separation_of_duties and me in state.earlier_drafters.get(kind, ()):
        return ()
    if me in state.collected.get(kind, ()):
        return ()
    return eligible_roles(policy, me, granted_roles(principal, policy, held))


@dataclass(frozen=True)
class Reviewer:
    principal: str
    roles: tuple[str, ...]


@dataclass(frozen=True)
class ReviewRight:
    """What one person may do about the version waiting at a gate, in words."""

    roles: tuple[str, ...]
    """The roles they may decide with now; empty: they may not."""
    barred: str | None
    """Why they may not (None when they may)."""
    separation: bool
    """Barred by separation of duties: the draft needs another reviewer."""
    others: tuple[Reviewer, ...]
    """Who else may decide it now."""


@retry_busy
def review_right(
    principal: Principal, run: RunView, kind: ArtifactKind, artifact_id: uuid.UUID
) -> ReviewRight:
    """This person's right to decide version `artifact_id` of `kind`, waiting on `run`."""
    state = state_of_view(run)
    me = principal.principal
    with read_transaction() as session:
        held = held_roles(session, principal.tenant_id, me)
        drafted = state.drafted_by.get(kind)
        waived = drafted == me and waiver(session, principal.tenant_id, kind, artifact_id, me)
        amended = drafted == me and me in _amenders(session, artifact_id)
        others = other_reviewers(session, run, state, kind, exclude=me)
    roles = acting_roles(principal, state, kind, held, waived)
    if roles:
        return ReviewRight(roles, None, False, others)
    barred, separation = _why_not(principal, state, kind, held, amended)
    return ReviewRight((), barred, separation, others)


def _amenders(session: Session, artifact_id: uuid.UUID) -> set[str]:
    stored = session.get(Artifact, artifact_id)
    return amended_by(stored.version, stored.content) if stored is not None else set()


def _why_not(
    principal: Principal, state: RunState, kind: ArtifactKind, held: list[str], amended: bool
) -> tuple[str, bool]:
    policy = state.policy(kind)
    me = principal.principal
    label = kind.value.replace("_", " ")
    if not principal.allows(Scope.APPROVE):
        return "your key may not approve (it lacks the approve scope)", False
    if policy.separation_of_duties and me in state.earlier_drafters.get(kind, ()):
        return (
            f"you asked for or amended a version of the {label} since its last approved one, "
            "so another reviewer must decide it (separation of duties)",
            True,
        )
    if policy.separation_of_duties and state.drafted_by.get(kind) == me:
        what = "amended this version" if amended else "asked for this version"
        return (
            f"you {what} of the {label}, so another reviewer must decide it (separation of duties)",
            True,
        )
    if me in state.collected.get(kind, ()):
        return "you approved this version already; the gate waits for other approvers", False
    granted = granted_roles(principal, policy, held)
    if not granted:
        return (
            f"you hold none of the roles this gate accepts ({', '.join(policy.roles)}); "
            "an admin grants roles",
            False,
        )
    return policy.eligibility_problem(me, granted) or "the gate's policy does not count you", False


def other_reviewers(
    session: Session, run: RunView, state: RunState, kind: ArtifactKind, exclude: str
) -> tuple[Reviewer, ...]:
    """Every other person of the tenant who may decide now: a live key that may approve
    and sees the run's organization, a role the gate accepts, and not barred."""
    policy = state.policy(kind)
    keys = session.scalars(
        select(ApiKey).where(ApiKey.tenant_id == run.tenant_id, ApiKey.revoked_at.is_(None))
    ).all()
    deciders = {
        key.principal
        for key in keys
        if set(key.scopes) & set(_DECIDES)
        and (key.organizations is None or run.organization_id in key.organizations)
    }
    grants: dict[str, list[str]] = {}
    for grant in session.scalars(
        select(RoleGrant).where(
            RoleGrant.tenant_id == run.tenant_id, RoleGrant.role.in_(policy.roles)
        )
    ):
        grants.setdefault(grant.principal, []).append(grant.role)
    # People who sign in with the identity provider decide through their groups' mapping.
    for who, scopes, mapped in group_access(session, run.tenant_id):
        if set(scopes) & set(_DECIDES):
            deciders.add(who)
            grants.setdefault(who, []).extend(r for r in mapped if r in policy.roles)
    barred = {exclude, *state.collected.get(kind, ())}
    if policy.separation_of_duties and state.drafted_by.get(kind):
        barred.add(str(state.drafted_by.get(kind)))
    found = []
    for who in sorted(deciders - barred):
        roles = eligible_roles(policy, who, sorted(grants.get(who, ())))
        if roles:
            found.append(Reviewer(who, roles))
    return tuple(found)
