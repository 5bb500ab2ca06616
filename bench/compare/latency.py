"""Completion -> next dispatch, read back from the rows the systems wrote.

Fleet: for each job whose next step is also a job (ingest -> index -> pre-analysis,
scope -> SoA draft, SoA ingest -> evidence -> gap analysis: 5 pairs a lifecycle), from
the job's `finished_at` (set in the transaction that commits its result and completion
signal) to the moment the coordinator handed the next job's message to the broker
(Celery's after_task_publish in the coordinator process, logged by bench.compare.sqlcount_app;
the next job row's `created_at` if no publish was logged). It spans: the job's commit,
the kick message, the coordinator's wake-up, its transaction, the publish. Split at the
next job row's `created_at`, the time the coordinator's transaction began deciding.

Peer: the same 5 pairs of consecutive steps, from a step's `completed_at_epoch_ms` to
the next step's `started_at_epoch_ms` in DBOS's operation_outputs (millisecond clock).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.steps import STEP_ORDER, StepKind
from orchestrator.db.models import Job
from orchestrator.lifecycle.definition import STEP_SPECS


def job_to_job_pairs() -> list[tuple[int, int]]:
    """Positions (0-based) of consecutive job steps in the lifecycle."""
    return [
        (i, i + 1)
        for i in range(len(STEP_ORDER) - 1)
        if STEP_SPECS[STEP_ORDER[i]].kind is StepKind.JOB
        and STEP_SPECS[STEP_ORDER[i + 1]].kind is StepKind.JOB
    ]


def _ms(later: datetime, earlier: datetime) -> float:
    return (later - earlier).total_seconds() * 1000


def fleet_latencies(
    session: Session, run_ids: list[uuid.UUID], published: dict[str, float]
) -> tuple[list[float], list[float]]:
    """(finished -> next published, finished -> next decided) in ms, over job pairs."""
    jobs = session.execute(
        select(
            Job.id, Job.run_id, Job.step, Job.step_attempt, Job.created_at, Job.finished_at
        ).where(Job.run_id.in_(run_ids))
    ).all()
    by_step = {(j.run_id, j.step, j.step_attempt): j for j in jobs}
    dispatch, decide = [], []
    for first, second in job_to_job_pairs():
        for job in jobs:
            if job.step != STEP_ORDER[first].value or job.finished_at is None:
                continue
            following = by_step.get((job.run_id, STEP_ORDER[second].value, job.step_attempt))
            if following is None:
                continue
            at = published.get(following.id)
            sent = datetime.fromtimestamp(at, UTC) if at else following.created_at
            dispatch.append(_ms(sent, job.finished_at))
            decide.append(_ms(following.created_at, job.finished_at))
    return dispatch, decide
