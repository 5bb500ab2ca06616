"""Analysis queue task: every drafting step runs through one service interface."""

from __future__ import annotations

import uuid
from typing import Any

from celery import Task, shared_task

from orchestrator.contracts.jobs import JobKind
from orchestrator.jobs.task import (
    batch_task_options,
    job_task_options,
    run_batch_task,
    run_job_task,
)
from workers.analysis.catalog_batches import CATALOG_BATCH_TASK, embed_one_batch
from workers.analysis.evidence_batches import JUDGE_BATCH_TASK, judge_one_batch
from workers.analysis.reassessment import evaluate_reassessment
from workers.analysis.service import prepare_analysis_step, run_analysis_step


@shared_task(**job_task_options(JobKind.ANALYSIS))
def run_step(self: Task, body: dict[str, Any]) -> str:
    return run_job_task(self, body, run_analysis_step, prepare_analysis_step)


@shared_task(
    name="analysis.reassess",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    soft_time_limit=300,
    time_limit=360,
)
def reassess(self: Task, body: dict[str, Any]) -> str:
    return evaluate_reassessment(uuid.UUID(str(body["reassessment_id"])))


@shared_task(**batch_task_options(JUDGE_BATCH_TASK))
def judge_batch(self: Task, body: dict[str, Any]) -> str:
    """One batch of an evidence analysis: a failed batch goes back to its job's list
    alone; the job (or the next worker offered it) takes it again."""
    return run_batch_task(self, body, judge_one_batch)


@shared_task(**batch_task_options(CATALOG_BATCH_TASK))
def embed_catalog_batch(self: Task, body: dict[str, Any]) -> str:
    """One batch of the catalogue's control texts to embed (the first analysis job on a
    catalogue version and model): a failed batch goes back to its job's list alone."""
    return run_batch_task(self, body, embed_one_batch)
