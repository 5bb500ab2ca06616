"""How a run was started: checked at start, kept on the run for its whole life."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.errors import InvalidInput, OriginRunRefused
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.origins import StartOrigin
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.db.models import WorkflowRun
from orchestrator.service.authority import RunAuthority


@dataclass(frozen=True)
class StartRecord:
    origin: StartOrigin
    origin_ref: str | None
    authority: RunAuthority


def parse_origin(origin: StartOrigin | str, origin_ref: str | None) -> StartOrigin:
    try:
        parsed = StartOrigin(origin)
    except ValueError as error:
        known = ", ".join(o.value for o in StartOrigin)
        raise InvalidInput(f"unknown start origin {origin!r}; known: {known}") from error
    ref = (origin_ref or "").strip()
    if parsed.needs_ref and not ref:
        raise InvalidInput(f"a run started by {parsed.value} names what it follows (origin_ref)")
    if not parsed.needs_ref and ref:
        raise InvalidInput("origin_ref is for schedule, reassessment, retry or replay starts")
    if len(ref) > 256:
        raise InvalidInput("origin_ref is at most 256 characters")
    return parsed


def check_origin_ref(
    session: Session, actor: Actor, assessment_id: uuid.UUID, start: StartRecord
) -> None:
    """A reassessment, retry or replay follows an earlier, finished run of the same
    assessment (a reassessment: a completed one; a retry: a cancelled one)."""
    if not start.origin.refers_to_run:
        return
    try:
        earlier_id = uuid.UUID(str(start.origin_ref))
    except ValueError as error:
        raise InvalidInput(f"origin_ref of a {start.origin.value} is a run id") from error
    earlier = session.scalar(
        select(WorkflowRun).where(
            WorkflowRun.id == earlier_id,
            WorkflowRun.tenant_id == actor.tenant_id,
            WorkflowRun.assessment_id == assessment_id,
        )
    )
    if earlier is None:
        raise OriginRunRefused(f"run {earlier_id} is not a run of assessment {assessment_id}")
    needed = {
        StartOrigin.REASSESSMENT: {WorkflowStatus.COMPLETED},
        StartOrigin.RETRY: {WorkflowStatus.CANCELLED},
        StartOrigin.REPLAY: {WorkflowStatus.COMPLETED, WorkflowStatus.CANCELLED},
    }[start.origin]
    if WorkflowStatus(earlier.status) not in needed:
        wanted = " or ".join(sorted(status.value for status in needed))
        raise OriginRunRefused(
            f"a {start.origin.value} follows a {wanted} run; run {earlier_id} is {earlier.status}"
        )
