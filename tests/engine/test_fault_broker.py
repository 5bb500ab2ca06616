"""Redis restarts (empty: no persistence) under busy workers of every queue, five times.

Every worker stays up and every run completes: what the restarts dropped from the queues
the sweeps send again, and no job is dead-lettered.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.config.settings import reset_settings
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support import private_broker
from tests.support.faults import (
    DEFAULT_REDELIVERY,
    FAST_SWEEPS,
    SLOW_READER_ENV,
    Reviewers,
    beat,
    dead_letters,
    restarts_under_load,
    unrecoverable,
)
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.private_services import PrivateRedis

pytestmark = [pytest.mark.integration, pytest.mark.faults]
# This module's fleets use a private Redis server (fixtures shared with other fault tests).
private_redis = private_broker.private_redis
broker_url = private_broker.broker_url
RESTARTS = 5
RUNS = 7
WORKERS = ("orchestrator", "ingestion,kb_index", "analysis,reporting")


@pytest.fixture(params=["fast sweeps", "default settings"])
def sweeps_env(
    request: pytest.FixtureRequest, fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, str]]:
    """Sweeps every second, or the product as shipped (nobody restarts a worker)."""
    env = FAST_SWEEPS if request.param == "fast sweeps" else DEFAULT_REDELIVERY
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    fleet.env.update(env)
    reset_settings()
    yield env
    reset_settings()


def test_workers_survive_five_broker_restarts_and_every_run_completes(
    sweeps_env: dict[str, str], fleet: Fleet, private_redis: PrivateRedis, tmp_path: Path
) -> None:
    # Slow enough that the reviewer's look at every run between two polls cannot miss it.
    slow = {**SLOW_READER_ENV, "LIFECYCLE_TEST_SLOW_PARSE_S": "8"}
    names = [fleet.start(queues, concurrency=2, extra_env=slow) for queues in WORKERS]
    owner, reviewer = new_tenant()
    reviewers = Reviewers(reviewer)
    with beat(fleet, tmp_path) as scheduler:
        run_ids = [start_assessment(owner, documents=2).id for _ in range(RUNS - RESTARTS)]
        recoveries = restarts_under_load(
            fleet,
            names,
            owner,
            reviewers,
            run_ids,
            private_redis.restart,
            times=RESTARTS,
            answer_timeout_s=60,
        )
        finals = reviewers.drive(run_ids, timeout_s=240)
        assert scheduler.poll() is None, "celery beat exited"

    assert not unrecoverable(fleet)
    assert {run.status for run in finals.values()} == {"completed"}, finals
    assert dead_letters(run_ids) == 0
    print(
        f"\nbroker restarts: {RESTARTS}, runs completed: {len(finals)}/{RUNS}, "
        f"workers answering again after {', '.join(f'{s:.1f}' for s in recoveries)} s"
    )
