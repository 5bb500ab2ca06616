"""My queue: the approval waits a person can act on now.

A wait is in someone's queue when their key may approve (approve scope), they hold a role
the gate's policy accepts (granted by an admin: orchestrator.service.roles), they are a
designated approver when the policy names some, they did not ask for the draft
(separation of duties), and they have not approved this version yet.
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
from orchestrator.lifecycle.definition import APPROVED_AT
from orchestrator.lifecycle.policies import GatePolicy
from orchestrator.lifecycle.state import RunState
from orchestrator.service.apikeys import Principal, Scope
from orchestrator.service.read_models import RunView
from orchestrator.service.roles import held_roles, roles_of

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
    """The roles this person may approve this gate with."""

    @property
    def age_s(self) -> float:
        return max(0.0, (utcnow() - self.waiting_since).total_seconds())


def granted_roles(
    principal: Principal, policy: GatePolicy, held: Iterable[str] | None = None
) -> tuple[str, ...]:
    """The gate's roles this person holds (granted, never claimed)."""
    mine = set(roles_of(principal.tenant_id, principal.principal) if held is None else held)
    return tuple(role for role in policy.roles if role in mine)


def state_of_view(run: RunView) -> RunState:
    return RunState.from_row(
        run_id=run.id,
        tenant_id=run.tenant_id,
        organization_id=run.organization_id,
        assessment_id=run.assessment_id,
        status=run.status,
        step=run.current_step,
        reason=run.reason,
        context=run.context,
    )


def acting_roles(
    principal: Principal, state: RunState, kind: ArtifactKind, held: Iterable[str] | None = None
) -> tuple[str, ...]:
    """The roles with which this person may decide on `kind` now; empty: not theirs.
    `held`: the roles they hold, when the caller read them already."""
    if not principal.allows(Scope.APPROVE):
        return ()
    policy = state.policy(kind)
    me = principal.principal
    if policy.separation_of_duties and state.drafted_by.get(kind) == me:
        return ()
    if me in state.collected.get(kind, ()):
        return ()
    return tuple(
        role
        for role in granted_roles(principal, policy, held)
        if policy.eligibility_problem(me, (role,)) is None
    )


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
    with read_transaction() as session:
        rows = [
            (RunView.of(run), name)
            for run, name in session.execute(
                query.order_by(WorkflowRun.updated_at).limit(MAX_QUEUE)
            )
        ]
        held = held_roles(session, principal.tenant_id, principal.principal)
        items = _items(principal, rows, kind, held)
        waits = _waits(session, [item[0] for item in items])
        marks = _marks(session, [item[0].id for item in items])
    queue = []
    for run, name, gate, version, step, roles in items:
        started, attempt = waits.get(run.id, (run.updated_at, 1))
        stage = marks.get((run.id, f"{step.value}:{attempt}"))
        queue.append(
            QueueItem(
                run=run,
                assessment_name=name,
                kind=gate,
                version=version,
                step=step,
                waiting_since=started,
                stage=stage,
                roles=roles,
            )
        )
    return sorted(queue, key=lambda item: item.waiting_since)


_Item = tuple[RunView, str, ArtifactKind, int, Step, tuple[str, ...]]


def _items(
    principal: Principal, rows: Iterable[tuple[RunView, str]], kind: str | None, held: list[str]
) -> list[_Item]:
    found: list[_Item] = []
    for run, name in rows:
        try:
            step = Step(run.current_step or "")
        except ValueError:
            continue
        gate = APPROVED_AT.get(step)
        if gate is None or (kind and gate.value != kind):
            continue
        state = state_of_view(run)
        version = state.artifacts.get(gate)
        roles = acting_roles(principal, state, gate, held)
        if version is None or not roles:
            continue
        found.append((run, name, gate, version, step, roles))
    return found


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
    return len(my_queue(principal))
