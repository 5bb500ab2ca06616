"""Every job kind has what the fleet needs of it before its first job runs: a route (a
task name on a queue a worker consumes) and a deadline for the lost-jobs sweep, so a
missing one fails here rather than when the sweep first meets such a job."""

from __future__ import annotations

from orchestrator.config.settings import Settings
from orchestrator.config.sweeps import DEFAULT_JOB_DEADLINES, SweepSettings
from orchestrator.contracts.jobs import JobKind
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
