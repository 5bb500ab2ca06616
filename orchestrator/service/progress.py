"""A run's progress through its jobs that fan out: batches done of all, per job."""

from __future__ import annotations

import uuid

from sqlalchemy import case, func, select

from orchestrator.contracts.identity import Actor
from orchestrator.db.batch_models import JobBatch
from orchestrator.db.busy import retry_busy
from orchestrator.db.session import read_transaction
from orchestrator.service.producer import load_run
from orchestrator.service.read_models import BatchProgressView


@retry_busy
def batch_progress(actor: Actor, run_id: uuid.UUID) -> list[BatchProgressView]:
    with read_transaction() as session:
        load_run(session, actor, run_id)
        rows = session.execute(
            select(
                JobBatch.job_id,
                JobBatch.step,
                func.sum(case((JobBatch.status == "succeeded", 1), else_=0)),
                func.count(),
                func.sum(case((JobBatch.status == "failed", 1), else_=0)),
                func.min(JobBatch.created_at),
            )
            .where(JobBatch.run_id == run_id)
            .group_by(JobBatch.job_id, JobBatch.step)
            .order_by(func.min(JobBatch.created_at))
        ).all()
    return [
        BatchProgressView(
            job_id=job_id, step=step, done=int(done), total=int(total), failed=int(failed)
        )
        for job_id, step, done, total, failed, _ in rows
    ]
