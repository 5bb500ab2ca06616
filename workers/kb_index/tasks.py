"""KB index queue tasks."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from orchestrator.jobs.task import JOB_TASK_OPTIONS, run_job_task
from workers.kb_index.service import embed_before
from workers.kb_index.service import index_kb as index_kb_service


@shared_task(name="kb_index.index_kb", soft_time_limit=900, time_limit=960, **JOB_TASK_OPTIONS)
def index_kb(self: Task, body: dict[str, Any]) -> str:
    return run_job_task(self, body, index_kb_service, embed_before)
