"""Imported by a worker (`--include orchestrator.testing.instant_worker`): every job of
that process is instant."""

from orchestrator.jobs.task import wrap_job_services
from orchestrator.testing.instant_jobs import instant_service

wrap_job_services(lambda _service: instant_service, replaces_work=True)
