"""Fault injection: jobs of one step park mid-flight until their process dies.

A worker started with `--include orchestrator.testing.held_jobs` and
LIFECYCLE_HOLD_JOB_STEP=<step> holds every job of that step after claiming it.
"""

from __future__ import annotations

import logging
import os
import threading

from orchestrator.jobs.interface import JobContext, JobResult, JobService
from orchestrator.jobs.task import wrap_job_services

log = logging.getLogger(__name__)
HELD_STEP = os.environ.get("LIFECYCLE_HOLD_JOB_STEP")


def _hold(service: JobService) -> JobService:
    def held(context: JobContext) -> JobResult:
        if context.request.step.value == HELD_STEP:
            log.warning("holding job %s for fault injection", context.request.job_id)
            threading.Event().wait()
        return service(context)

    return held


wrap_job_services(_hold)
