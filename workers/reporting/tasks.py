"""Reporting queue task."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from orchestrator.contracts.jobs import JobKind
from orchestrator.jobs.task import job_task_options, run_job_task
from workers.reporting.service import prepare_report
from workers.reporting.service import render_report as render_report_service


@shared_task(**job_task_options(JobKind.RENDER_REPORT))
def render_report(self: Task, body: dict[str, Any]) -> str:
    return run_job_task(self, body, render_report_service, prepare_report)
