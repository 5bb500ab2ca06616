"""Dead letters: jobs the lost-jobs sweep gave up on. Listed, replayed once, resolved.

Giving up failed the job's step (and so the run). Replaying a dead letter is a retry of
that step, recorded like any operator command, with a key derived from the dead letter:
replaying twice, or crashing between the retry and the mark, sends one retry only.
A letter is resolved when its step later succeeds (however it was retried), or by an
operator who dealt with it otherwise; a resolved letter is no longer pending.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select, update

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import InvalidInput, NotFound
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.text import require_nul_free
from orchestrator.db.busy import retry_busy
from orchestrator.db.ops_models import DeadLetter
from orchestrator.db.session import read_transaction, transaction
from orchestrator.service.operations import retry_step
from orchestrator.service.producer import get_run
from orchestrator.service.read_models import SignalReceipt


class DeadLetterView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    job_id: str
    run_id: uuid.UUID
    tenant_id: str
    step: str
    kind: str
    queue: str
    task_name: str
    reason: str
    deliveries: int
    redispatches: int
    created_at: datetime
    replayed_at: datetime | None
    resolved_at: datetime | None = None
    resolved_by: str | None = None
    resolution: str | None = None

    @property
    def pending(self) -> bool:
        return self.replayed_at is None and self.resolved_at is None

    @classmethod
    def of(cls, row: DeadLetter) -> DeadLetterView:
        return cls.model_validate(row, from_attributes=True)


@retry_busy
def list_dead_letters(
    *,
    run_id: uuid.UUID | None = None,
    tenant_id: str | None = None,
    include_replayed: bool = False,
    limit: int = 100,
) -> list[DeadLetterView]:
    """Newest first; pending ones only (neither replayed nor resolved) unless
    `include_replayed`."""
    query = select(DeadLetter)
    if run_id is not None:
        query = query.where(DeadLetter.run_id == run_id)
    if tenant_id is not None:
        query = query.where(DeadLetter.tenant_id == tenant_id)
    if not include_replayed:
        query = query.where(DeadLetter.replayed_at.is_(None), DeadLetter.resolved_at.is_(None))
    query = query.order_by(DeadLetter.id.desc()).limit(max(1, min(limit, 1000)))
    with read_transaction() as session:
        return [DeadLetterView.of(row) for row in session.scalars(query)]


@retry_busy
def get_dead_letter(letter_id: int) -> DeadLetterView:
    with read_transaction() as session:
        row = session.get(DeadLetter, letter_id)
        if row is None:
            raise NotFound(f"dead letter {letter_id} not found")
        return DeadLetterView.of(row)


def replay_key(letter: DeadLetterView) -> str:
    return f"dead-letter:{letter.id}:replay"


@retry_busy
def replay_dead_letter(letter_id: int, *, actor_id: str, reason: str) -> SignalReceipt:
    """Retry the dead letter's step as a new attempt, then mark the letter replayed."""
    letter = get_dead_letter(letter_id)
    if letter.replayed_at is not None:
        raise InvalidInput(
            f"dead letter {letter.id} was replayed at {letter.replayed_at:%Y-%m-%d %H:%M:%S}"
        )
    if letter.resolved_at is not None:
        raise InvalidInput(_resolved(letter))
    actor = Actor(tenant_id=letter.tenant_id, actor_id=actor_id)
    run = get_run(actor, letter.run_id)
    if run.status != WorkflowStatus.FAILED.value or run.current_step != letter.step:
        raise InvalidInput(
            f"run {run.id} is {run.status} at {run.current_step}; replaying "
            f"dead letter {letter.id} needs it failed at {letter.step}"
        )
    receipt = retry_step(
        actor,
        letter.run_id,
        idempotency_key=replay_key(letter),
        reason=f"{reason.strip()} (replay of dead letter {letter.id}, job {letter.job_id})"
        if reason.strip()
        else "",
    )
    with transaction() as session:
        session.execute(
            update(DeadLetter)
            .where(DeadLetter.id == letter.id, DeadLetter.replayed_at.is_(None))
            .values(replayed_at=utcnow())
        )
    return receipt


@retry_busy
def resolve_dead_letter(letter_id: int, *, actor_id: str, reason: str) -> DeadLetterView:
    """An operator settles a letter by hand (dealt with outside the fleet, or no longer
    wanted): it stops being pending, with who and why kept on it."""
    if not reason.strip():
        raise InvalidInput("resolving a dead letter needs a reason")
    require_nul_free(reason=reason, actor_id=actor_id)
    if not actor_id.strip():
        raise InvalidInput("resolving a dead letter needs an operator id")
    with transaction() as session:
        row = session.get(DeadLetter, letter_id, with_for_update=True)
        if row is None:
            raise NotFound(f"dead letter {letter_id} not found")
        if row.resolved_at is not None:
            raise InvalidInput(_resolved(DeadLetterView.of(row)))
        row.resolved_at, row.resolved_by, row.resolution = utcnow(), actor_id, reason.strip()
        session.flush()
        return DeadLetterView.of(row)


def _resolved(letter: DeadLetterView) -> str:
    assert letter.resolved_at is not None
    return (
        f"dead letter {letter.id} was resolved at {letter.resolved_at:%Y-%m-%d %H:%M:%S} "
        f"by {letter.resolved_by}: {letter.resolution}"
    )
