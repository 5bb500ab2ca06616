"""A reviewer's queue: the approval waits a person can act on now, and those they cannot
because of separation of duties (they amended or asked for the version: it needs another
reviewer, named), each with the claim that holds on it.

A wait is theirs when their key may approve, they hold a role the gate's policy accepts,
they are a designated approver where the policy names some, they did not ask for the
draft, and they have not approved this version yet (`approval_rights`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Assessment, StepExecution, WorkflowRun
from orchestrator.db.ops_models import SweepMark
from orchestrator.db.session import read_transaction
from orchestrator.jobs.artifacts import find_artifact
from orchestrator.lifecycle.state import RunState
from orchestrator.service.apikeys import Principal, Scope
from orchestrator.service.approval_rights import (
    Reviewer,
    acting_roles,
    decision_gates,
    eligible_roles,
    granted_roles,
    other_reviewers,
    state_of_view,
    waiver,
)
from orchestrator.service.read_models import RunView
from orchestrator.service.review_claims import ClaimView, claims_on
from orchestrator.service.roles import held_roles

MAX_QUEUE = 500


@dataclass(frozen=True)
class QueueItem:
    run: RunView
    assessment_name: str
    kind: ArtifactKind
    version: int
    step: Step
    waiting_since: datetime
    stage: str | None
    """reminded or escalated, once the approval sweep has acted on this wait."""
    roles: tuple[str, ...]
    """The roles this person may decide this gate with; empty: it needs another reviewer."""
    others: tuple[Reviewer, ...] = ()
    """Who may decide it, when this person may not (separation of duties)."""
    claim: ClaimView | None = None

    @property
    def age_s(self) -> float:
        return max(0.0, (utcnow() - self.waiting_since).total_seconds())

    @property
    def needs_another_reviewer(self) -> bool:
        return not self.roles


@retry_busy
def my_queue(
    principal: Principal, *, kind: str | None = None, assessment_id: uuid.UUID | None = None
) -> list[QueueItem]:
    """Oldest wait first: the one most overdue is on top."""
    waiting = WorkflowStatus.WAITING_FOR_APPROVAL.value
    query = (
        select(WorkflowRun, Assessment.name)
        .join(Assessment, Assessment.id == WorkflowRun.assessment_id)
        .where(WorkflowRun.tenant_id == principal.tenant_id, WorkflowRun.status == waiting)
    )
    if principal.organizations is not None:
        query = query.where(WorkflowRun.organization_id.in_(principal.organizations))
    if assessment_id is not None:
        query = query.where(WorkflowRun.assessment_id == assessment_id)
    if not principal.allows(Scope.APPROVE):
        return []
    with read_transaction() as session:
        rows = [
            (RunView.of(run), name)
            for run, name in session.execute(
                query.order_by(WorkflowRun.updated_at).limit(MAX_QUEUE)
            )
        ]
        held = held_roles(session, principal.tenant_id, principal.principal)
        items = _items(session, principal, rows, kind, held)
        waits = _waits(session, [item.run for item in items])
        marks = _marks(session, [item.run.id for item in items])
    claims = claims_on(principal.actor, [item.run.id for item in items])
    queue = []
    for item in items:
        started, attempt = waits.get(item.run.id, (item.run.updated_at, 1))
        queue.append(
            QueueItem(
                run=item.run,
                assessment_name=item.name,
                kind=item.gate,
                version=item.version,
                step=item.step,
                waiting_since=started,
                stage=marks.get((item.run.id, f"{item.step.value}:{attempt}")),
                roles=item.roles,
                others=item.others,
                claim=claims.get((item.run.id, item.gate.value)),
            )
        )
    return sorted(queue, key=lambda entry: entry.waiting_since)


@dataclass(frozen=True)
class _Item:
    run: RunView
    name: str
    gate: ArtifactKind
    version: int
    step: Step
    roles: tuple[str, ...]
    others: tuple[Reviewer, ...]


def _items(
    session: Session,
    principal: Principal,
    rows: Iterable[tuple[RunView, str]],
    kind: str | None,
    held: list[str],
) -> list[_Item]:
    found: list[_Item] = []
    for run, name in rows:
        try:
            step = Step(run.current_step or "")
        except ValueError:
            continue
        state = state_of_view(run)
        for gate in decision_gates(state):
            version = state.artifacts.get(gate)
            if version is None or (kind and gate.value != kind):
                continue
            waived = _waived(session, principal, state, gate, version)
            roles = acting_roles(principal, state, gate, held, waived)
            if roles:
                found.append(_Item(run, name, gate, version, step, roles, ()))
            elif _separated(principal, state, gate, held):
                others = other_reviewers(session, run, state, gate, exclude=principal.principal)
                found.append(_Item(run, name, gate, version, step, (), others))
    return found


def _waived(
    session: Session, principal: Principal, state: RunState, gate: ArtifactKind, version: int
) -> bool:
    if state.drafted_by.get(gate) != principal.principal:
        return False
    artifact = find_artifact(session, state.run_id, gate, version)
    return artifact is not None and waiver(
        session, principal.tenant_id, gate, artifact.artifact_id, principal.principal
    )


def _separated(principal: Principal, state: RunState, gate: ArtifactKind, held: list[str]) -> bool:
    """Only separation of duties keeps this person from deciding: they would otherwise."""
    policy = state.policy(gate)
    me = principal.principal
    return (
        policy.separation_of_duties
        and me in state.authors(gate)
        and me not in state.collected.get(gate, ())
        and bool(eligible_roles(policy, me, granted_roles(principal, policy, held)))
    )


def _waits(session: Session, runs: list[RunView]) -> dict[uuid.UUID, tuple[datetime, int]]:
    """When each run's current wait began, and its attempt."""
    if not runs:
        return {}
    rows = session.execute(
        select(
            StepExecution.run_id,
            StepExecution.step,
            StepExecution.attempt,
            StepExecution.started_at,
        ).where(StepExecution.run_id.in_([r.id for r in runs]), StepExecution.status == "waiting")
    )
    current = {r.id: r.current_step for r in runs}
    found: dict[uuid.UUID, tuple[datetime, int]] = {}
    for run_id, step, attempt, started in rows:
        if current.get(run_id) == step:
            found[run_id] = (_aware(started), attempt)
    return found


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _marks(session: Session, run_ids: list[uuid.UUID]) -> dict[tuple[uuid.UUID, str], str]:
    if not run_ids:
        return {}
    found: dict[tuple[uuid.UUID, str], str] = {}
    for run_id, mark, key in session.execute(
        select(SweepMark.run_id, SweepMark.mark, SweepMark.key).where(
            SweepMark.run_id.in_(run_ids), SweepMark.mark.in_(("reminded", "escalated"))
        )
    ):
        if found.get((run_id, key)) != "escalated":
            found[(run_id, key)] = mark
    return found


def queue_count(principal: Principal) -> int:
    """The waits this person may decide now (the header's count)."""
    return sum(1 for item in my_queue(principal) if not item.needs_another_reviewer)
