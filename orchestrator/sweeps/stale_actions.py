"""What an operator does with a stale run: list, resume, or cancel it.

Resuming follows the run's state: a blocked run gets `assessment_resumed`; a run whose
job went quiet gets that job re-dispatched; any other run is simply woken up. Every
change goes through the producer and the inbox, like any caller's.
"""

from __future__ import annotations

import uuid
from enum import StrEnum

from sqlalchemy import select

from orchestrator.contracts.identity import Actor
from orchestrator.db.models import WorkflowRun
from orchestrator.db.ops_models import SweepMark
from orchestrator.db.session import transaction
from orchestrator.engine import messages as fleet
from orchestrator.service.producer import get_run, send_signal
from orchestrator.service.read_models import RunView, SignalReceipt
from orchestrator.sweeps.lost_jobs import redispatch_now
from orchestrator.sweeps.stale import MARK


class Resumed(StrEnum):
    UNBLOCKED = "unblocked"
    JOB_REDISPATCHED = "job_redispatched"
    WOKEN = "woken"


def stale_runs(actor: Actor, limit: int = 100) -> list[RunView]:
    """The tenant's runs flagged stale and still unchanged since."""
    with transaction() as session:
        rows = session.scalars(
            select(WorkflowRun)
            .join(SweepMark, SweepMark.run_id == WorkflowRun.id)
            .where(
                WorkflowRun.tenant_id == actor.tenant_id,
                SweepMark.mark == MARK,
                SweepMark.key == WorkflowRun.version.cast(SweepMark.key.type),
            )
            .order_by(WorkflowRun.updated_at)
            .limit(limit)
        )
        return [RunView.of(row) for row in rows if actor.sees(row.organization_id)]


def resume_stale(actor: Actor, run_id: uuid.UUID, idempotency_key: str) -> Resumed:
    run = get_run(actor, run_id)
    if run.status == "blocked":
        send_signal(
            actor,
            run_id,
            "assessment_resumed",
            idempotency_key,
            payload={"reason": "resumed after going stale"},
        )
        return Resumed.UNBLOCKED
    job_id = run.context.get("active_job_id")
    if job_id and redispatch_now(str(job_id)):
        return Resumed.JOB_REDISPATCHED
    fleet.kick(run_id)
    return Resumed.WOKEN


def cancel_stale(
    actor: Actor,
    run_id: uuid.UUID,
    idempotency_key: str,
    reason: str = "cancelled after going stale",
) -> SignalReceipt:
    return send_signal(
        actor, run_id, "assessment_cancelled", idempotency_key, payload={"reason": reason}
    )
