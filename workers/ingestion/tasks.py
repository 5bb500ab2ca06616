"""Ingestion queue tasks."""

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
from workers.ingestion.fan_out import PARSE_BATCH_TASK, parse_one_batch, prepare_documents
from workers.ingestion.service import ingest_documents as ingest_documents_service
from workers.ingestion.service import ingest_soa as ingest_soa_service
from workers.ingestion.soa_document import prepare_soa


@shared_task(**job_task_options(JobKind.INGEST_DOCUMENTS))
def ingest_documents(self: Task, body: dict[str, Any]) -> str:
    return run_job_task(self, body, ingest_documents_service, prepare_documents)


@shared_task(**job_task_options(JobKind.INGEST_SOA))
def ingest_soa(self: Task, body: dict[str, Any]) -> str:
    return run_job_task(self, body, ingest_soa_service, prepare_soa)


@shared_task(**batch_task_options(PARSE_BATCH_TASK))
def parse_batch(self: Task, body: dict[str, str]) -> str:
    """One batch of an ingest_documents job: a failed batch goes back to its job's list
    alone; the job (or the next worker offered it) takes it again."""
    return run_batch_task(self, body, parse_one_batch)
