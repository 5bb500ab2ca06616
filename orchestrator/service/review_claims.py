"""Claims on a gate's review: one reviewer says "I am on this", and others see it.

A claim names a run and the gate it waits at; it lapses `LIFECYCLE_CONSOLE_CLAIM_TTL_S`
after it was taken (or renewed by its holder). A lapsed claim counts for nothing at once;
the claims sweep then deletes it and records the lapse. Taking a lapsed claim over records
the lapse too. Every claim, release and lapse is in the run's audit trail.

While a claim holds, only its holder decides, amends or approves that review
(`refuse_unless_holder`, called where approval events and amendments are recorded).
Another person may take the review over explicitly (`take_over_review`): audited, and
the holder told through the tenant's webhooks (`review.claim_taken_over`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.config.sweep_registry import sweep
from orchestrator.contracts.audit import SYSTEM_ACTOR, AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import GateNotWaiting, ReviewClaimed
from orchestrator.contracts.events import NotificationEvent, event_id
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.busy import retry_busy
from orchestrator.db.review_models import ReviewClaim
from orchestrator.db.session import read_transaction, transaction
from orchestrator.db.tables import RUNS
from orchestrator.engine.run_rows import RunRecord, state_of
from orchestrator.engine.tenant_events import dispatch, notify
from orchestrator.lifecycle.definition import APPROVED_AT
from orchestrator.service.producer import load_run
from orchestrator.service.review_audit import audit_review

_E = AuditEventType


@dataclass(frozen=True)
class ClaimView:
    run_id: uuid.UUID
    kind: ArtifactKind
    version: int
    claimed_by: str
    claimed_at: datetime
    expires_at: datetime

    @classmethod
    def of(cls, row: ReviewClaim) -> ClaimView:
        return cls(
            row.run_id,
            ArtifactKind(row.artifact_kind),
            row.artifact_version,
            row.claimed_by,
            _aware(row.claimed_at),
            _aware(row.expires_at),
        )


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def claim_ttl() -> timedelta:
    return timedelta(seconds=get_settings().console.claim_ttl_s)


def waiting_gate(run: RunRecord) -> tuple[ArtifactKind, int] | None:
    """The gate a run waits at for a decision, and the version waiting; None otherwise."""
    if run.status != WorkflowStatus.WAITING_FOR_APPROVAL.value or not run.current_step:
        return None
    gate = APPROVED_AT.get(Step(run.current_step))
    version = state_of(run).artifacts.get(gate) if gate is not None else None
    return (gate, version) if gate is not None and version is not None else None


def _refusal(held: ReviewClaim, what: str) -> ReviewClaimed:
    until = _aware(held.expires_at)
    return ReviewClaimed(
        f"{held.claimed_by} claimed this review until {until:%Y-%m-%d %H:%M} UTC; {what}",
        claimed_by=held.claimed_by,
        expires_at=until.isoformat(),
    )


def refuse_unless_holder(
    session: Session, run_id: uuid.UUID, kind: ArtifactKind, actor_id: str
) -> None:
    """Refuse a decision, amendment or approval of `kind` while another person's claim on
    its review holds. The claim row is locked, so a take-over cannot slip in between."""
    held = session.get(ReviewClaim, (run_id, kind.value), with_for_update=True)
    if held is None or held.claimed_by == actor_id or _aware(held.expires_at) <= utcnow():
        return
    raise _refusal(held, "only they may decide it until they release it or it is taken over")


@retry_busy
def claim_review(actor: Actor, run_id: uuid.UUID, kind: ArtifactKind) -> ClaimView:
    """Claim (or renew) the review of the gate `run_id` waits at; refused while another
    reviewer's claim holds."""
    try:
        return _claim(actor, run_id, kind)
    except IntegrityError:  # someone claimed it between our read and our insert
        return _claim(actor, run_id, kind)


@retry_busy
def take_over_review(actor: Actor, run_id: uuid.UUID, kind: ArtifactKind) -> ClaimView:
    """Claim the review although another person holds it: audited, and the holder told."""
    after: list[int] = []
    try:
        view = _claim(actor, run_id, kind, take_over=after)
    except IntegrityError:
        view = _claim(actor, run_id, kind, take_over=after)
    dispatch(after)
    return view


def _claim(
    actor: Actor, run_id: uuid.UUID, kind: ArtifactKind, take_over: list[int] | None = None
) -> ClaimView:
    with transaction() as session:
        run = load_run(session, actor, run_id)
        waiting = waiting_gate(run)
        if waiting is None or waiting[0] is not kind:
            raise GateNotWaiting(
                f"the run does not wait for a {kind.value} decision: nothing to claim"
            )
        now = utcnow()
        held = session.get(ReviewClaim, (run.id, kind.value), with_for_update=True)
        if held is not None and held.claimed_by != actor.actor_id:
            if _aware(held.expires_at) > now:
                if take_over is None:
                    raise _refusal(held, "take it over explicitly to decide it yourself")
                take_over += _taken_over(session, run, held, actor.actor_id, now)
            else:
                _lapsed(session, run, held, taken_over_by=actor.actor_id)
            session.delete(held)
            session.flush()
            held = None
        if held is None:
            held = ReviewClaim(
                run_id=run.id,
                artifact_kind=kind.value,
                tenant_id=run.tenant_id,
                claimed_by=actor.actor_id,
                claimed_at=now,
            )
            session.add(held)
        held.artifact_version = waiting[1]
        held.expires_at = now + claim_ttl()
        session.flush()
        audit_review(
            session,
            run,
            _E.LIFECYCLE_WORKFLOW_REVIEW_CLAIMED,
            actor.actor_id,
            {
                "artifact_kind": kind.value,
                "version": waiting[1],
                "expires_at": held.expires_at.isoformat(),
            },
        )
        return ClaimView.of(held)


@retry_busy
def release_review(actor: Actor, run_id: uuid.UUID, kind: ArtifactKind) -> bool:
    """Release this person's claim; False when they held none."""
    with transaction() as session:
        run = load_run(session, actor, run_id)
        gone = session.execute(
            delete(ReviewClaim)
            .where(
                ReviewClaim.run_id == run.id,
                ReviewClaim.artifact_kind == kind.value,
                ReviewClaim.claimed_by == actor.actor_id,
            )
            .execution_options(synchronize_session=False)
        )
        if not getattr(gone, "rowcount", 0):
            return False
        audit_review(
            session,
            run,
            _E.LIFECYCLE_WORKFLOW_REVIEW_RELEASED,
            actor.actor_id,
            {"artifact_kind": kind.value},
        )
        return True


@retry_busy
def claims_on(actor: Actor, run_ids: Iterable[uuid.UUID]) -> dict[tuple[uuid.UUID, str], ClaimView]:
    """The claims that hold now on these runs, by (run id, artifact kind)."""
    ids = list(run_ids)
    if not ids:
        return {}
    now = utcnow()
    with read_transaction() as session:
        rows = session.scalars(
            select(ReviewClaim).where(
                ReviewClaim.tenant_id == actor.tenant_id, ReviewClaim.run_id.in_(ids)
            )
        ).all()
        views = [ClaimView.of(row) for row in rows]
    return {(v.run_id, v.kind.value): v for v in views if v.expires_at > now}


def claim_on(actor: Actor, run_id: uuid.UUID, kind: ArtifactKind) -> ClaimView | None:
    return claims_on(actor, [run_id]).get((run_id, kind.value))


@retry_busy
def claim_of_run(actor: Actor, run_id: uuid.UUID, kind: ArtifactKind) -> ClaimView | None:
    """The claim that holds now on the run's `kind` review; NotFound for another tenant's run."""
    with read_transaction() as session:
        load_run(session, actor, run_id)
    return claim_on(actor, run_id, kind)


@retry_busy
@sweep("review_claims")
def release_lapsed_claims(batch: int | None = None) -> int:
    """The claims sweep: delete the claims past their expiry, recording each lapse once
    (a guarded delete: two sweeps at once free each claim once)."""
    now = utcnow()
    limit = batch or get_settings().sweeps.batch
    with transaction() as session:
        due = session.scalars(
            select(ReviewClaim).where(ReviewClaim.expires_at <= now).limit(limit)
        ).all()
        freed = 0
        for claim in due:
            gone = session.execute(
                delete(ReviewClaim)
                .where(
                    ReviewClaim.run_id == claim.run_id,
                    ReviewClaim.artifact_kind == claim.artifact_kind,
                    ReviewClaim.claimed_by == claim.claimed_by,
                    ReviewClaim.expires_at <= now,
                )
                # Decided by the database; the rows this session loaded are not consulted.
                .execution_options(synchronize_session=False)
            )
            if getattr(gone, "rowcount", 0):
                run = session.execute(select(RUNS).where(RUNS.c.id == claim.run_id)).first()
                if run is not None:
                    _lapsed(session, run, claim)
                freed += 1
        return freed


def _taken_over(
    session: Session, run: RunRecord, held: ReviewClaim, by: str, now: datetime
) -> list[int]:
    """Record the take-over on the run and tell the holder (the tenant's webhooks)."""
    facts = {
        "artifact_kind": held.artifact_kind,
        "version": held.artifact_version,
        "holder": held.claimed_by,
        "taken_over_by": by,
        "held_until": _aware(held.expires_at).isoformat(),
    }
    audit_review(session, run, _E.LIFECYCLE_WORKFLOW_REVIEW_CLAIM_TAKEN_OVER, by, facts)
    console = get_settings().webhooks.console_url.rstrip("/")
    return notify(
        session,
        event_id=event_id(run.id, held.artifact_kind, held.claimed_by, by, now.isoformat()),
        tenant_id=run.tenant_id,
        run_id=run.id,
        event=NotificationEvent.REVIEW_CLAIM_TAKEN_OVER,
        payload={**facts, "run_id": str(run.id), "console_url": f"{console}/runs/{run.id}"},
        now=now,
    )


def _lapsed(
    session: Session, run: RunRecord, claim: ReviewClaim, taken_over_by: str | None = None
) -> None:
    audit_review(
        session,
        run,
        _E.LIFECYCLE_WORKFLOW_REVIEW_CLAIM_LAPSED,
        SYSTEM_ACTOR,
        {
            "artifact_kind": claim.artifact_kind,
            "claimed_by": claim.claimed_by,
            "expired_at": _aware(claim.expires_at).isoformat(),
            **({"taken_over_by": taken_over_by} if taken_over_by else {}),
        },
    )
