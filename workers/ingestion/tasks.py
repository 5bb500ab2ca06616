"""Ingestion queue tasks."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from orchestrator.jobs.task import JOB_TASK_OPTIONS, run_job_task
from workers.ingestion.ahead import prepare_documents
from workers.ingestion.service import ingest_documents as ingest_documents_service
from workers.ingestion.service import ingest_soa as ingest_soa_service
from workers.ingestion.soa_document import prepare_soa


@shared_task(
    name="ingestion.ingest_documents", soft_time_limit=600, time_limit=660, **JOB_TASK_OPTIONS
)
def ingest_documents(self: Task, body: dict[str, Any]) -> str:
    return run_job_task(self, body, ingest_documents_service, prepare_documents)


@shared_task(name="ingestion.ingest_soa", soft_time_limit=300, time_limit=360, **JOB_TASK_OPTIONS)
def ingest_soa(self: Task, body: dict[str, Any]) -> str:
    return run_job_task(self, body, ingest_soa_service, prepare_soa)
