"""Reporting queue task."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from orchestrator.jobs.task import JOB_TASK_OPTIONS, run_job_task
from workers.reporting.service import prepare_report
from workers.reporting.service import render_report as render_report_service


@shared_task(
    name="reporting.render_report", soft_time_limit=300, time_limit=360, **JOB_TASK_OPTIONS
)
def render_report(self: Task, body: dict[str, Any]) -> str:
    return run_job_task(self, body, render_report_service, prepare_report)
