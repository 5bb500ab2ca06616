"""KB index queue tasks."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from orchestrator.contracts.jobs import JobKind
from orchestrator.jobs.task import (
    batch_task_options,
    job_task_options,
    run_batch_task,
    run_job_task,
)
from workers.kb_index.fan_out import EMBED_BATCH_TASK, embed_one_batch
from workers.kb_index.service import embed_before
from workers.kb_index.service import index_kb as index_kb_service


@shared_task(**job_task_options(JobKind.INDEX_KB))
def index_kb(self: Task, body: dict[str, Any]) -> str:
    return run_job_task(self, body, index_kb_service, embed_before)


@shared_task(**batch_task_options(EMBED_BATCH_TASK))
def embed_batch(self: Task, body: dict[str, str]) -> str:
    """One batch of an index_kb job: a failed batch goes back to its job's list alone; the
    job (or the next worker offered it) takes it again."""
    return run_batch_task(self, body, embed_one_batch)
