"""Every job kind is declared once (orchestrator.contracts.jobs.JOBS) with what the fleet
needs of it before its first job runs: a route (a task name on a queue a worker consumes),
the task's time limits and a deadline for the lost-jobs sweep above them, so a missing or
contradictory one fails here rather than when the sweep first meets such a job."""

from __future__ import annotations

from orchestrator.config.settings import Settings
from orchestrator.config.sweeps import DEFAULT_JOB_DEADLINES, SweepSettings
from orchestrator.contracts.jobs import JOB_DECLARATIONS, JOBS, JobKind
from orchestrator.engine.celery_app import create_app
from orchestrator.engine.routing import QUEUES, ROUTES


def test_every_job_kind_has_a_route_a_queue_and_a_deadline() -> None:
    app = create_app(Settings(broker_url="memory://localhost/"))
    app.loader.import_default_modules()
    for kind in JobKind:
        route = ROUTES[kind]
        assert route.queue in QUEUES, kind
        assert route.task_name in app.tasks, kind
        assert DEFAULT_JOB_DEADLINES[kind] > 0, kind
        assert SweepSettings().job_deadline(kind).total_seconds() == DEFAULT_JOB_DEADLINES[kind]


def test_each_kind_is_declared_once_and_its_task_keeps_the_declared_limits() -> None:
    assert set(JOB_DECLARATIONS) == set(JobKind) and len(JOBS) == len(JobKind)
    app = create_app(Settings(broker_url="memory://localhost/"))
    app.loader.import_default_modules()
    for job in JOBS:
        task = app.tasks[job.task]
        assert (task.soft_time_limit, task.time_limit) == (
            job.soft_time_limit_s,
            job.time_limit_s,
        ), job
        assert task.acks_late and task.reject_on_worker_lost, job
        # A live job is never taken for a lost one: its deadline outlasts its hard limit.
        assert job.deadline_s > job.time_limit_s > job.soft_time_limit_s > 0, job
        route = ROUTES[job.kind]
        assert (route.task_name, route.queue) == (job.task, job.queue), job
